//go:build !(linux || freebsd || openbsd || netbsd || windows) && !nogui

package desktop

import (
	"os/exec"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// trayNeedsUILoop is true on macOS: the tray item lives on the main thread's event loop (NSApp),
// which Fyne's loop runs, so that loop starts at once and every tray update runs on it.
const trayNeedsUILoop = true

// windowInChild is false here: Fyne's loop runs in this process for the tray anyway, so the
// window stays in it too.
const windowInChild = false

// windowCommand is not used where windowInChild is false.
func windowCommand() *exec.Cmd { return nil }

// fyneTray is Fyne's own tray, kept on macOS: the loop runs from the start there anyway, and
// Fyne's hidden monitor window is what carries the system's quit request (logout, Dock Quit) to
// the app. Call its methods on the UI goroutine.
type fyneTray struct {
	app  desktop.App
	win  fyne.Window
	menu *fyne.Menu
}

// newTrayHost wraps Fyne's tray; a left click on the icon shows win (Fyne's own handler, so
// onTapped is not needed), and the system's quit request ends Fyne's loop (so onSessionEnd is
// not needed either: Run drains once the loop has returned).
func newTrayHost(a fyne.App, win fyne.Window, _, _ func()) trayHost {
	d, _ := a.(desktop.App) // Fyne's desktop driver always is one
	return &fyneTray{app: d, win: win}
}

// Show sets m as the tray menu the first time and refreshes it in place afterwards.
func (t *fyneTray) Show(m *fyne.Menu) {
	if t.app == nil {
		return
	}
	if t.menu != m {
		t.menu = m
		t.app.SetSystemTrayMenu(m) // always a menu: some hosts hide an item without one
		t.app.SetSystemTrayWindow(t.win)
		return
	}
	m.Refresh()
}

// SetIcon shows r as the tray icon.
func (t *fyneTray) SetIcon(r fyne.Resource) {
	if t.app != nil {
		t.app.SetSystemTrayIcon(r)
	}
}

// Start and Stop do nothing: Fyne starts its tray with its loop and removes it at Quit.
func (t *fyneTray) Start() {}

// Stop: see Start.
func (t *fyneTray) Stop() {}
