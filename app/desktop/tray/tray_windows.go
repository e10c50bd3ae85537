//go:build windows && !nogui

package tray

import (
	"log/slog"
	"runtime"
	"time"

	"fyne.io/systray"
)

// readyWait bounds how long Start waits for systray's window to exist.
const readyWait = 10 * time.Second

// register returns systray's start and end functions. systray's own external-loop mode does not
// fit Windows: it creates the tray's hidden window on the caller's thread and pumps messages on
// another goroutine, while a window's messages reach only the thread that created it. So start
// runs systray.Run (window and message loop together) on a goroutine locked to its OS thread,
// and waits until the window exists: systray drops menu calls made before. onSessionEnd (may be
// nil) is systray's exit callback: it runs on that loop at WM_ENDSESSION (logout), and Windows
// waits for it; it also runs after end.
func register(onSessionEnd func()) (start, end func()) {
	start = func() {
		ready := make(chan struct{})
		go func() {
			runtime.LockOSThread() // for good: the loop owns this thread until the process ends
			systray.Run(func() { close(ready) }, onSessionEnd)
		}()
		select {
		case <-ready:
		case <-time.After(readyWait):
			slog.Warn("tray: the notification-area icon did not appear", "waited", readyWait)
		}
	}
	return start, systray.Quit
}

// canStart: the notification area needs nothing that can be missing.
func canStart() error { return nil }
