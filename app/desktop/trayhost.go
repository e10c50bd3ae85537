//go:build !nogui

package desktop

import "github.com/routinely/routinely/app/ui"

// trayHost is the system tray the app drives: app/desktop/tray on Linux/BSD and Windows, Fyne's
// own tray on macOS (see newTrayHost in trayhost_*.go).
type trayHost interface {
	ui.TrayHost
	// Start shows the item; Stop removes it. Both are idempotent.
	Start()
	Stop()
}
