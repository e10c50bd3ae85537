package bridge

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// EnvWindowProcess marks the window process: the app's binary started with it set to "1"
// hosts the window (IsWindowProcess) instead of parsing its command line.
const EnvWindowProcess = "ROUTINELY_WINDOW_PROCESS"

// IsWindowProcess reports whether this process was started as a window process.
func IsWindowProcess() bool { return os.Getenv(EnvWindowProcess) == "1" }

// ErrShut is returned by Spawner.Show once Stop has been called.
var ErrShut = errors.New("the app is quitting: no window opens any more")

// Spawner starts the window process when the window is wanted and keeps at most one: a second
// Show while it runs raises its window instead. A window process that exits (its window was
// closed) or dies (a crash, SIGKILL) leaves the app as it was; the next Show starts another.
// Its methods are safe for concurrent use.
type Spawner struct {
	// Command returns the command that starts a window process: the app's own binary with
	// EnvWindowProcess=1 in its environment. Its Stdin and Stdout are set by the spawner.
	Command func() *exec.Cmd
	Acts    Actions // what the window's actions call
	Feed    *Feed   // what the window is sent; Stop closes it
	Logger  *slog.Logger
	// AnswerWait is how long a running window process gets to handle a raise before it is
	// taken for frozen (SIGSTOP, a hung toolkit), killed and replaced; 0 means 5 s.
	AnswerWait time.Duration

	mu    sync.Mutex
	child *child
	shut  bool
}

// child is one running window process.
type child struct {
	cmd    *exec.Cmd
	conn   *Conn
	exited chan struct{} // closed once the process has been waited for
	raised atomic.Uint64 // the highest raise the window has handled (Cursor.Raise)
}

// Show brings the window up: it raises the running window process's window, or starts a new
// window process. A running one that has not handled the raise within AnswerWait is frozen: it
// is killed and a new one started, so the person's next Open always gets a window. It returns
// ErrShut after Stop, or the error starting the process.
func (s *Spawner) Show() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return ErrShut
	}
	if s.child != nil {
		go s.expectAnswer(s.child, s.Feed.Raise())
		return nil
	}
	c, err := s.start()
	if err != nil {
		return err
	}
	s.child = c
	go s.serve(c)
	return nil
}

// expectAnswer replaces c if it has not handled raise number seq within AnswerWait.
func (s *Spawner) expectAnswer(c *child, seq uint64) {
	wait := s.AnswerWait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-c.exited:
		return
	case <-t.C:
	}
	if c.raised.Load() >= seq {
		return
	}
	s.logger().Warn("the window process does not answer; replacing it", "pid", c.cmd.Process.Pid, "waited", wait)
	_ = c.cmd.Process.Kill()
	<-c.exited // serve has forgotten it
	if err := s.Show(); err != nil && !errors.Is(err, ErrShut) {
		s.logger().Error("cannot open the window", "err", err)
	}
}

// PID returns the running window process's pid, 0 when none runs.
func (s *Spawner) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.child == nil {
		return 0
	}
	return s.child.cmd.Process.Pid
}

// start starts a window process on a fresh pipe pair: the child's stdin carries the parent's
// replies, its stdout the child's calls. Both pipes are close-on-exec in this process, so
// no other child (a routine's run) inherits them, and the child sees EOF as soon as this
// process dies.
func (s *Spawner) start() (*child, error) {
	cmd := s.Command()
	toChildR, toChildW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start the window process: %w", err)
	}
	fromChildR, fromChildW, err := os.Pipe()
	if err != nil {
		toChildR.Close()
		toChildW.Close()
		return nil, fmt.Errorf("start the window process: %w", err)
	}
	cmd.Stdin, cmd.Stdout = toChildR, fromChildW
	err = cmd.Start()
	toChildR.Close() // the child's ends: only the child holds them now
	fromChildW.Close()
	if err != nil {
		toChildW.Close()
		fromChildR.Close()
		return nil, fmt.Errorf("start the window process: %w", err)
	}
	s.logger().Info("window process started", "pid", cmd.Process.Pid)
	return &child{cmd: cmd, conn: NewConn(fromChildR, toChildW), exited: make(chan struct{})}, nil
}

// serve answers c's calls until it disconnects, then makes sure it has ended and forgets it.
func (s *Spawner) serve(c *child) {
	serve(c.conn, s.Acts, s.Feed, func(cur Cursor) { storeMax(&c.raised, cur.Raise) })
	s.mu.Lock()
	if s.child == c {
		s.child = nil
	}
	s.mu.Unlock()
	waited := make(chan error, 1)
	go func() { waited <- c.cmd.Wait() }()
	var err error
	select {
	case err = <-waited: // it disconnected by exiting, as it should
	case <-time.After(exitGrace):
		// A child that closed its end but still runs (hung in the toolkit) is of no use: end
		// it, so it never lingers as a window nobody can reach.
		_ = c.cmd.Process.Kill()
		err = <-waited
	}
	close(c.exited)
	if err != nil {
		s.logger().Warn("window process ended", "pid", c.cmd.Process.Pid, "status", err.Error())
		return
	}
	s.logger().Info("window process ended", "pid", c.cmd.Process.Pid)
}

// exitGrace is how long a window process that disconnected gets to exit by itself.
const exitGrace = 2 * time.Second

// Stop ends the window for good (the app is quitting): it tells the window process to close
// (Feed.Close), waits up to grace for it to exit, then kills it. Later Shows return ErrShut; a
// later Stop waits for the same process.
func (s *Spawner) Stop(grace time.Duration) {
	s.mu.Lock()
	s.shut = true
	c := s.child
	s.mu.Unlock()
	s.Feed.Close()
	if c == nil {
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.exited:
	case <-t.C:
		s.logger().Warn("window process did not close in time; ending it", "pid", c.cmd.Process.Pid)
		_ = c.conn.Close()
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

func (s *Spawner) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// storeMax sets a to v if v is larger.
func storeMax(a *atomic.Uint64, v uint64) {
	for old := a.Load(); v > old; old = a.Load() {
		if a.CompareAndSwap(old, v) {
			return
		}
	}
}
