// Package bridge links the desktop app (tray, notifications, owner: the parent process) to its
// window process (a child that exists only while the window is open). It carries two things
// over one inherited pipe pair, with net/rpc and its gob encoding:
//
//   - the newest session.State, which the window shows (the parent publishes, the child asks
//     for the next one with a long-polling Next call), and
//   - the person's actions from the window (run now, pause, Approve/Deny, take back,
//     settings, Quit), which the child calls on the parent.
//
// The child is always the rpc client and the parent the server, so one stream each way is
// enough and a blocked Next never holds up an action (net/rpc serves each call on its own
// goroutine). Nothing listens: the pipes are inherited by the one child the parent started,
// so no other process (or user) can connect. The package links no Fyne.
package bridge

import (
	"errors"
	"io"
	"sync"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// serviceName is the name the parent's rpc service is registered under.
const serviceName = "Window"

// Actions are what the window asks of the app: ui.Actions without ShowWindow, which the
// window process answers itself. The parent passes its own implementation to Serve; Client
// implements it in the child. A new action is one method here, one on Service and one on
// Client.
type Actions interface {
	Decide(requestID string, approve bool) error
	RunNow(routine string) error
	SetPaused(routine string, paused bool) error // routine "" means all
	TakeBack()
	EndStuckOwner(pid int) error
	SetStartAtLogin(on bool) error
	SetPolicy(p ownership.Policy) error
	OpenConfig() error
	Quit()
	History(routine string, limit int) ([]journal.Run, error)
	Output(runID int64) ([]byte, error)
}

// Cursor is what the window has seen of a Feed: the sequence numbers of the last state, raise
// request and error message it received. The zero Cursor has seen nothing.
type Cursor struct {
	State, Raise, Error uint64
}

// Update is the answer to Next: the newest state and whatever is newer than the caller's
// Cursor.
type Update struct {
	Cursor Cursor        // what this update brings the caller up to
	State  session.State // the newest snapshot (the whole struct: gob carries every exported field)
	// Raise reports a request to bring the window to the front (a second Open while it is up).
	Raise bool
	// Error is a failed action of the tray's to show in the window ("" when none is new).
	Error string
	// Closed reports that the app is quitting: the window process closes its window and exits.
	Closed bool
}

// Feed holds what the window process is sent: the newest state, raise requests and error
// messages. The parent keeps one Feed for the app's lifetime, across window processes. Its
// methods are safe for concurrent use.
type Feed struct {
	mu      sync.Mutex
	seen    Cursor // the latest sequence numbers
	state   session.State
	err     string
	closed  bool
	changed chan struct{} // closed and replaced on every change: wakes the waiting Next calls
}

// NewFeed returns a feed holding the zero State (sequence 1, so that a window that has seen
// nothing, the zero Cursor, is always behind it).
func NewFeed() *Feed { return &Feed{seen: Cursor{State: 1}, changed: make(chan struct{})} }

// Publish makes st the newest state.
func (f *Feed) Publish(st session.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state = st
	f.seen.State++
	f.wake()
}

// Raise asks the window, if one is connected, to come to the front, and returns the request's
// sequence number: a window has handled it once its Cursor.Raise reaches that number.
func (f *Feed) Raise() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen.Raise++
	f.wake()
	return f.seen.Raise
}

// ShowError sends err's text to the window (nil does nothing).
func (f *Feed) ShowError(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err.Error()
	f.seen.Error++
	f.wake()
}

// Close tells every window, now and later, that the app is quitting.
func (f *Feed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.wake()
}

func (f *Feed) wake() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// next returns the update for a caller that has seen c, waiting until there is something new
// (or the feed closes). The zero Cursor always gets the current state at once, so a new
// window shows something immediately. It returns errGone when done closes first.
func (f *Feed) next(c Cursor, done <-chan struct{}) (Update, error) {
	first := c == Cursor{}
	for {
		f.mu.Lock()
		s := f.seen
		if f.closed || s.State > c.State || s.Raise > c.Raise || s.Error > c.Error {
			u := Update{Cursor: s, State: f.state, Closed: f.closed}
			// A raise or error from before this window connected is not for it: the first
			// update only catches it up.
			if !first {
				u.Raise = s.Raise > c.Raise
				if s.Error > c.Error {
					u.Error = f.err
				}
			}
			f.mu.Unlock()
			return u, nil
		}
		wait := f.changed
		f.mu.Unlock()
		select {
		case <-wait:
		case <-done:
			return Update{}, errGone
		}
	}
}

// errGone ends a Next call whose window process has disconnected.
var errGone = errors.New("the window process disconnected")

// Conn joins a read stream and a write stream into the io.ReadWriteCloser net/rpc needs (the
// two ends of a pipe pair). Close closes both.
type Conn struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

// NewConn returns the connection reading from r and writing to w; Close closes both.
func NewConn(r io.ReadCloser, w io.WriteCloser) *Conn {
	return &Conn{Reader: r, Writer: w, closers: []io.Closer{r, w}}
}

// Close closes both streams and returns the first error.
func (c *Conn) Close() error {
	var first error
	for _, cl := range c.closers {
		if err := cl.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
