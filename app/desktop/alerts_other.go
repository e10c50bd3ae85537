//go:build !(linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import (
	"log/slog"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/ui"
)

// newAlerter returns the app's notifier and the function that closes it: on macOS and Windows,
// Fyne's (no withdrawal, the app's icon for every notification).
func newAlerter(a fyne.App, _ *slog.Logger) (ui.Alerter, func()) {
	return ui.FyneAlerter{App: a}, func() {}
}
