//go:build darwin && !nogui

package tray

/*
#cgo LDFLAGS: -framework CoreFoundation
#include <CoreFoundation/CoreFoundation.h>

// serveMainThread runs the main thread's run loop for up to seconds, or until it has handled
// one source: the calls other threads queue for the main thread (fyne.io/systray's
// performSelectorOnMainThread) are such sources.
static void serveMainThread(double seconds) {
	CFRunLoopRunInMode(kCFRunLoopDefaultMode, seconds, 1);
}
*/
import "C"

import (
	"log/slog"
	"sync/atomic"
	"time"

	"fyne.io/systray"
)

// clickOpensMenu is true on macOS: a click on a menu bar item opens its menu, for every item on
// the menu bar (Apple's Human Interface Guidelines, "The menu bar"), so New's onTapped is not used
// and the menu's Open opens the window.
const clickOpensMenu = true

const (
	// slowLaunch is how long Start waits for AppKit to have launched the menu bar item before it
	// logs that it still waits (it goes on waiting: every item call made before would be lost).
	slowLaunch = 10 * time.Second
	// serveSlice is how long one turn of serveMainThread may wait for a queued call while the
	// app quits from systray's exit callback; the loop around it checks between turns whether
	// the app is done.
	serveSlice = 50 * time.Millisecond
	// finishWait bounds how long systray's exit callback waits, once the app has drained and
	// released, for the rest of Main's f (closing the window process, which takes up to 2 s,
	// removing the item and the instance socket) before AppKit ends the process.
	finishWait = 3 * time.Second
)

var (
	// launched is closed once AppKit has launched the app and created the menu bar item (by
	// systray's ready callback, which systray runs on a goroutine of its own); systray drops
	// item calls made before.
	launched = make(chan struct{})
	// sessionEnd is register's onSessionEnd, for systray's exit callback (onLoopExit).
	sessionEnd atomic.Pointer[func()]
	// finished is closed by Main's goroutine once its f has returned and the loop has been told
	// to stop (Main runs once per process: it is the process's event loop).
	finished = make(chan struct{})
)

// link is what the item lives on. On macOS that is the app's own NSStatusItem on AppKit's loop,
// which Main runs on the main thread for the whole life of the process: nothing can end it under
// the app, so it is always connected.
type link struct{}

// Connected is always true: see link.
func (link) Connected() bool { return true }

// Main runs f with AppKit's event loop on the calling goroutine and returns once f has returned.
// AppKit runs its loop, and with it the menu bar item and every systray call, only on the
// process's main thread (systray queues each call for it and waits), so call Main from the main
// goroutine, which fyne.io/systray's init locks to the main thread; f runs on a goroutine of its
// own and may call Start and the rest. When f returns, Main stops the loop. Call it once.
//
// When the system quits the app (logout, or a Quit Apple Event), AppKit calls systray's exit
// callback and ends the process as soon as it returns; see onLoopExit.
func Main(f func()) {
	go func() {
		defer close(finished)
		f()
		// A Quit before AppKit has launched would find no loop to stop: Run would never return.
		// f's Tray.Stop has normally quit already; systray.Quit runs once (quitOnce), so this
		// one is for an f that returned without it.
		<-launched
		systray.Quit()
	}()
	systray.Run(func() { close(launched) }, onLoopExit)
	<-finished
}

// onLoopExit is systray's exit callback: AppKit runs it on the main thread when the system quits
// the app (applicationWillTerminate) and ends the process when it returns, so it returns only
// once onSessionEnd has (the app has drained and released), and then once Main's f has returned
// too or finishWait has passed. Meanwhile the app's tray calls wait for the main thread, which
// this callback holds: it serves them itself by running the main run loop in short turns, so the
// drain never waits for a thread that waits for the drain. (Clicks and Apple Events are not
// delivered in those turns: nothing re-enters the app's quit.)
func onLoopExit() {
	h := sessionEnd.Load()
	if h == nil {
		return
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		(*h)()
	}()
	serveUntil(drained, nil)
	serveUntil(finished, time.After(finishWait))
}

// serveUntil serves the main run loop (serveMainThread) until done is closed or timeout fires
// (nil: no timeout). Call it on the main thread.
func serveUntil(done <-chan struct{}, timeout <-chan time.Time) {
	for {
		select {
		case <-done:
			return
		case <-timeout:
			return
		default:
			C.serveMainThread(C.double(serveSlice.Seconds()))
		}
	}
}

// register keeps onSessionEnd for systray's exit callback (onLoopExit) and returns the start and
// end functions: start waits for the item Main's loop creates (logging once if that takes over
// slowLaunch) and names it title (its tooltip: a title would be shown as text in the menu bar);
// end stops the loop, after which Main returns once its f has.
func register(title string, onSessionEnd func()) (start, end func()) {
	if onSessionEnd != nil {
		sessionEnd.Store(&onSessionEnd)
	}
	start = func() {
		select {
		case <-launched:
		case <-time.After(slowLaunch):
			slog.Warn("tray: still waiting for the menu bar item (is the app running through tray.Main on the main goroutine?)",
				"waited", slowLaunch)
			<-launched
		}
		systray.SetTooltip(title)
	}
	return start, systray.Quit
}

// canStart: the menu bar needs nothing that can be missing.
func canStart() (link, error) { return link{}, nil }

// linkClosed is false: macOS systray reports no failures as panics (see link).
func linkClosed(error) bool { return false }

// iconData is the icon as systray takes it on macOS: the PNG itself (NSImage reads it).
func iconData(png []byte) ([]byte, error) { return png, nil }
