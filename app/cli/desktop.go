package cli

import (
	"context"
	"log/slog"

	"github.com/routinely/routinely/app/paths"
)

// DesktopFunc starts the desktop app on the profile p and blocks until it quits. background
// starts it with no window shown (what autostart uses). It returns nil on a clean quit.
type DesktopFunc func(ctx context.Context, p paths.Paths, background bool, version string, logger *slog.Logger) error
