// Package core is the owner's lifecycle shared by the daemon and the desktop app: open the
// journal, run the scheduler engine while the ownership handle owns, drain and release.
package core

// CONTRACT FILE (owned by the CLI implementer; the desktop app calls it too).

import (
	"context"
	"errors"
	"log/slog"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
)

// Serve runs the routines of profile p while h owns: it opens the journal, starts a
// scheduler.Engine gated by h, calls started (if non-nil) with the running engine, and returns
// when ctx ends (then it stops the engine, waits for in-flight runs and releases h) or when h is
// lost (takeover approved: h has already drained and released). It returns nil in both cases and
// an error only when the routines could not be started (journal or config unusable).
func Serve(ctx context.Context, h *ownership.Handle, p paths.Paths, n scheduler.Notifier, logger *slog.Logger, started func(*scheduler.Engine)) error {
	return errors.New("core: not implemented yet")
}
