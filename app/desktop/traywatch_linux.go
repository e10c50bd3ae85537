//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import (
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"
)

// watcherName is the bus name of the StatusNotifierWatcher that tray icons register with.
const watcherName = "org.kde.StatusNotifierWatcher"

// trayHostPresent polls the session bus until a StatusNotifierWatcher owns its name or wait
// has passed.
func trayHostPresent(wait time.Duration) (bool, string) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false, fmt.Sprintf("no session D-Bus: %v", err)
	}
	defer conn.Close()
	deadline := time.Now().Add(wait)
	for {
		var has bool
		err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, watcherName).Store(&has)
		if err == nil && has {
			return true, ""
		}
		if time.Now().After(deadline) {
			if err != nil {
				return false, fmt.Sprintf("ask the session bus for %s: %v", watcherName, err)
			}
			return false, watcherName + " is not on the session bus"
		}
		time.Sleep(500 * time.Millisecond)
	}
}
