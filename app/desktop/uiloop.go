//go:build !nogui

package desktop

import (
	"sync"

	"fyne.io/fyne/v2"
)

// uiLoop tracks Fyne's event loop in this process, where the window lives in it (macOS and
// Windows: see windowInChild). Fyne ticks at 60 Hz on the main OS thread for as long as its loop
// runs, and the window's OpenGL context loads Mesa; the loop cannot be restarted once it has
// ended. Where the window lives in a window process, this process never starts the loop: it
// stays idle until Run marks it ended. Functions for the UI goroutine are dropped while idle;
// the window asked for before the loop starts is shown when it does.
type uiLoop struct {
	mu       sync.Mutex
	state    loopState
	wantShow bool // the window was asked for before the loop ran
}

type loopState int

const (
	loopIdle  loopState = iota // not started: functions for the UI goroutine are dropped
	loopLive                   // Run was (or is about to be) called: fyne.Do queues for the loop
	loopEnded                  // Run returned: nothing may touch the window any more
)

func newUILoop() *uiLoop { return &uiLoop{} }

// do runs f on the UI goroutine if the loop is live and reports whether it will; while idle or
// after the loop ended, f is dropped (the publisher keeps the newest state for the start).
func (l *uiLoop) do(f func()) bool {
	l.mu.Lock()
	live := l.state == loopLive
	l.mu.Unlock()
	if live {
		uiDo(f)
	}
	return live
}

// live reports whether the loop is live (functions handed to fyne.Do will run).
func (l *uiLoop) live() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state == loopLive
}

// show runs showWindow on the UI goroutine when the loop is live; while idle it records the
// wish, which begin reports when the loop starts (the loop then shows the window itself).
func (l *uiLoop) show(showWindow func()) {
	l.mu.Lock()
	state := l.state
	if state == loopIdle {
		l.wantShow = true
	}
	l.mu.Unlock()
	if state == loopLive {
		uiDo(showWindow)
	}
}

// begin marks the loop live (Run's goroutine calls it just before fyne.App.Run) and reports
// whether the window was asked for meanwhile. It refuses (ok false) once shut: an app that is
// shutting down must not start Fyne's loop, which nothing would quit (Fyne watches SIGTERM only
// from its Run on, and the session's Quit has already passed).
func (l *uiLoop) begin() (ok, show bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == loopEnded {
		return false, false
	}
	l.state = loopLive
	return true, l.wantShow
}

// shut ends an idle loop before it ever ran (the app is shutting down); a live loop is left to
// its Quit.
func (l *uiLoop) shut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == loopIdle {
		l.state = loopEnded
	}
}

// end marks the loop ended (Run returned, or the app quit before it ever ran).
func (l *uiLoop) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state = loopEnded
}

// ended reports whether Run has returned.
func (l *uiLoop) ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state == loopEnded
}

// uiDo is fyne.Do for goroutines that may outlive Fyne's loop: when the loop ends at the same
// moment (the driver quits by itself on SIGTERM), Fyne v2.7.1 can close its queue between its
// "drained" check and the send, which panics with a send on a closed channel. Losing the update
// is right then: there is no window left to update.
func uiDo(f func()) {
	defer func() { _ = recover() }()
	fyne.Do(f)
}
