// Package desktop is the Fyne tray application: the only package that imports fyne.io/fyne/v2/app.
package desktop

import (
	"context"
	"errors"
	"log/slog"

	"github.com/routinely/routinely/app/paths"
)

// Run starts the desktop app on profile p and blocks until it quits (CONTRACT: matches cli.DesktopFunc).
func Run(ctx context.Context, p paths.Paths, background bool, version string, logger *slog.Logger) error {
	return errors.New("desktop: not implemented yet")
}
