//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import (
	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/tray"
)

// trayNeedsUILoop is false here: the tray is a StatusNotifierItem on the session D-Bus, served by
// fyne.io/systray's own goroutines, so Fyne's loop can wait until the window is wanted, and tray
// updates need not go through it.
const trayNeedsUILoop = false

// newTrayHost is our own tray (app/desktop/tray), not Fyne's: Fyne's opens a hidden OpenGL window
// at start-up, which loads Mesa and needs Fyne's loop running. onTapped runs on a left click.
func newTrayHost(_ fyne.App, _ fyne.Window, onTapped func()) trayHost {
	return tray.New("Routinely", onTapped)
}
