//go:build !nogui && (linux || freebsd || openbsd || netbsd) && !android

package tray

import (
	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

// canStart reports whether systray can export the item: its start function only logs a failed
// session-bus connection, and its end function then dereferences the missing connection.
// systray uses the same shared dbus.SessionBus connection, which this call opens and caches.
func canStart() error {
	_, err := dbus.SessionBus()
	return err
}

// setTitle names the StatusNotifierItem (its Id and Title); Fyne sets it because some hosts
// crash on an item without a title.
func setTitle(title string) { systray.SetTitle(title) }
