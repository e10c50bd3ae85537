//go:build !nogui

package desktop

import (
	"errors"
	"log/slog"

	"github.com/routinely/routinely/app/desktop/instance"
)

// claimProfile makes this process the profile's one desktop app (app/desktop/instance). It
// returns handed true when another app already runs for the profile and was asked to show its
// window (background false) or only confirmed it runs (background true, a login item starting
// while the app runs): this launch then exits 0. When the check itself cannot be made (a
// stopped app holding the lock, a state path too long for a socket), it logs why and the app
// starts anyway: the ownership guard still lets only one process run the routines.
func claimProfile(stateDir string, background bool, logger *slog.Logger) (p *instance.Primary, handed bool) {
	p, err := instance.Claim(stateDir, !background, 0)
	var running *instance.RunningError
	switch {
	case errors.As(err, &running):
		if background {
			logger.Info("the desktop app already runs for this profile; nothing to start", "pid", running.PID)
		} else {
			logger.Info("the desktop app already runs for this profile: its window was brought to the front", "pid", running.PID)
		}
		return nil, true
	case err != nil:
		logger.Warn("cannot check for another desktop app on this profile; starting anyway", "err", err)
		return nil, false
	}
	return p, false
}
