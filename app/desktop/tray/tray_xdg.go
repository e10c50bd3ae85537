//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package tray

import (
	"errors"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

// link is what the item lives on: the shared session-bus connection systray exports it on. The
// bus can end under the app at any time (logout, the session's dbus-daemon exiting while the app
// drains); from then on Connected is false and the item is gone.
type link = *dbus.Conn

// register names the item title (its StatusNotifierItem Id and Title) and hands it to systray,
// whose D-Bus goroutines serve it (no UI loop needed), and returns its start and end functions.
// onSessionEnd is not used: a desktop session's end reaches the app as SIGTERM or SIGHUP, and
// systray calls its exit callback only from end.
func register(title string, _ func()) (start, end func()) {
	systray.SetTitle(title)
	return systray.RunWithExternalLoop(nil, nil)
}

// canStart returns the connection systray will export the item on, or why it cannot: its
// start function only logs a failed session-bus connection, and its end function then
// dereferences the missing connection. systray uses the same shared dbus.SessionBus connection,
// which this call opens and caches.
func canStart() (link, error) {
	return dbus.SessionBus()
}

// linkClosed reports whether err (from a recovered systray panic) means the bus connection
// closed, which is expected at any instant and not worth a warning.
func linkClosed(err error) bool { return errors.Is(err, dbus.ErrClosed) }

// iconData is the icon as systray takes it here: the PNG itself (a StatusNotifierItem's
// IconPixmap is decoded from it by systray).
func iconData(png []byte) ([]byte, error) { return png, nil }
