package bridge

import (
	"fmt"
	"io"
	"net/rpc"
	"sync"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// Serve answers one window process's calls on conn with acts and feed until the connection
// ends (the child exited or closed its end), then closes conn and returns. Every call runs on
// its own goroutine, so acts must be safe for concurrent use.
func Serve(conn io.ReadWriteCloser, acts Actions, feed *Feed) { serve(conn, acts, feed, nil) }

// serve is Serve; seen (may be nil) receives the Cursor of each Next call: what the window has
// applied so far (it asks for the next update only once it has applied the last).
func serve(conn io.ReadWriteCloser, acts Actions, feed *Feed, seen func(Cursor)) {
	done := make(chan struct{})
	srv := rpc.NewServer()
	if err := srv.RegisterName(serviceName, &Service{acts: acts, feed: feed, done: done, seen: seen}); err != nil {
		panic(fmt.Sprintf("bridge: register the rpc service: %v", err)) // a programming error
	}
	// net/rpc waits for the calls in flight before ServeConn returns, and a Next call waits
	// for news: done, closed as soon as reading fails, ends those waits.
	srv.ServeConn(&watchedConn{ReadWriteCloser: conn, done: done})
}

// watchedConn closes done the first time a read fails (EOF: the child has gone).
type watchedConn struct {
	io.ReadWriteCloser
	done chan struct{}
	once sync.Once
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(p)
	if err != nil {
		c.once.Do(func() { close(c.done) })
	}
	return n, err
}

// Service is the rpc service the window process calls (exported for net/rpc, which calls its
// methods by name: "Window.Next", "Window.RunNow", …). Each method takes its arguments and a
// pointer to its reply, as net/rpc requires, and returns the action's error, which reaches
// the window as its text.
type Service struct {
	acts Actions
	feed *Feed
	done <-chan struct{}
	seen func(Cursor) // may be nil
}

// Empty is the argument or reply of a call that has none.
type Empty struct{}

// Next waits until the feed holds something the caller (at cursor c) has not seen, and
// returns it; see Feed.
func (s *Service) Next(c Cursor, u *Update) error {
	if s.seen != nil {
		s.seen(c)
	}
	var err error
	*u, err = s.feed.next(c, s.done)
	return err
}

// DecideArgs are Decide's arguments.
type DecideArgs struct {
	RequestID string
	Approve   bool
}

// Decide answers a takeover request.
func (s *Service) Decide(a DecideArgs, _ *Empty) error { return s.acts.Decide(a.RequestID, a.Approve) }

// RunNow asks for a run of routine now.
func (s *Service) RunNow(routine string, _ *Empty) error { return s.acts.RunNow(routine) }

// PauseArgs are SetPaused's arguments.
type PauseArgs struct {
	Routine string
	Paused  bool
}

// SetPaused pauses or resumes a routine ("" = all).
func (s *Service) SetPaused(a PauseArgs, _ *Empty) error {
	return s.acts.SetPaused(a.Routine, a.Paused)
}

// TakeBack asks the current owner to hand the routines back.
func (s *Service) TakeBack(_ Empty, _ *Empty) error { s.acts.TakeBack(); return nil }

// EndStuckOwner ends the stuck owner pid and makes the app the owner.
func (s *Service) EndStuckOwner(pid int, _ *Empty) error { return s.acts.EndStuckOwner(pid) }

// SetStartAtLogin installs or removes the login item.
func (s *Service) SetStartAtLogin(on bool, _ *Empty) error { return s.acts.SetStartAtLogin(on) }

// SetPolicy saves the takeover policy.
func (s *Service) SetPolicy(p ownership.Policy, _ *Empty) error { return s.acts.SetPolicy(p) }

// OpenConfig opens routines.toml with the person's default app.
func (s *Service) OpenConfig(_ Empty, _ *Empty) error { return s.acts.OpenConfig() }

// Quit ends the app (it returns at once; the app drains, then ends the window process).
func (s *Service) Quit(_ Empty, _ *Empty) error { s.acts.Quit(); return nil }

// HistoryArgs are History's arguments.
type HistoryArgs struct {
	Routine string
	Limit   int
}

// History returns a routine's runs, newest first.
func (s *Service) History(a HistoryArgs, runs *[]journal.Run) error {
	var err error
	*runs, err = s.acts.History(a.Routine, a.Limit)
	return err
}

// Output returns a run's captured output.
func (s *Service) Output(runID int64, out *[]byte) error {
	var err error
	*out, err = s.acts.Output(runID)
	return err
}
