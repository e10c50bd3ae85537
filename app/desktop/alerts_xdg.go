//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import (
	"log/slog"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/notify"
	"github.com/routinely/routinely/app/ui"
	"github.com/routinely/routinely/assets"
)

// newAlerter returns the app's notifier and the function that flushes and closes it: on
// Linux/BSD our own org.freedesktop.Notifications client (app/desktop/notify), which can withdraw
// a notification and show a warning icon, neither of which Fyne's can.
func newAlerter(a fyne.App, logger *slog.Logger) (ui.Alerter, func()) {
	n, err := notify.New(notify.Options{AppName: "Routinely", DesktopEntry: appID,
		Icon: assets.TrayOwning, WarningIcon: assets.TrayWarning, Logger: logger})
	if err != nil { // the embedded icons are PNGs (assets' tests): not expected
		logger.Warn("desktop notifications through Fyne", "err", err)
		return ui.FyneAlerter{App: a}, func() {}
	}
	return dbusAlerter{n}, n.Close
}

// dbusAlerter is ui.Alerter over notify.Notifier.
type dbusAlerter struct{ n *notify.Notifier }

func (d dbusAlerter) Send(a ui.Alert) ui.Withdraw {
	return d.n.Send(notify.Notice{Title: a.Title, Body: a.Body, Warning: a.Warning})
}
