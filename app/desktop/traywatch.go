//go:build !nogui

package desktop

import (
	"log/slog"
	"time"
)

// trayWait is how long the app gives the session's StatusNotifierWatcher to appear.
const trayWait = 4 * time.Second

// warnIfNoTray shows the window, with one clear warning, when no tray host will show the icon:
// otherwise a --background start would leave the app running and invisible.
func warnIfNoTray(logger *slog.Logger, showWindow func()) {
	ok, why := trayHostPresent(trayWait)
	if ok {
		return
	}
	logger.Warn("no system tray: the tray icon cannot be shown, so the window is shown instead. "+
		"On GNOME, install and enable the \"AppIndicator and KStatusNotifierItem Support\" extension "+
		"(gnome-shell-extension-appindicator), then restart Routinely.", "reason", why)
	showWindow()
}
