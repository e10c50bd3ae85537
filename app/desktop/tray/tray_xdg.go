//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package tray

import (
	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

// register hands the item to systray, whose D-Bus goroutines serve it (no UI loop needed), and
// returns its start and end functions. onSessionEnd is not used: a desktop session's end reaches
// the app as SIGTERM or SIGHUP, and systray calls its exit callback only from end.
func register(func()) (start, end func()) { return systray.RunWithExternalLoop(nil, nil) }

// canStart reports whether systray can export the item: its start function only logs a failed
// session-bus connection, and its end function then dereferences the missing connection.
// systray uses the same shared dbus.SessionBus connection, which this call opens and caches.
func canStart() error {
	_, err := dbus.SessionBus()
	return err
}
