package ui

import (
	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
)

// What the window and the tray derive from a session snapshot. The snapshot itself is the
// session's (session.State); the rules for showing it are here.

// ownerRecord returns the record to show: this app's own while it owns, else the observed one.
func ownerRecord(s session.State) *ownership.Record {
	if s.Mode == session.ModeOwning && s.Self != nil {
		return s.Self
	}
	return s.Owner.Record
}

// allPaused reports whether every routine is paused (the tray's Pause all is then disabled).
func allPaused(s session.State) bool {
	if len(s.Routines) == 0 {
		return false
	}
	for _, r := range s.Routines {
		if !r.Paused && r.Disabled == "" {
			return false
		}
	}
	return true
}

// anyPaused reports whether some routine is paused (the tray's Resume all has something to do).
func anyPaused(s session.State) bool {
	for _, r := range s.Routines {
		if r.Paused {
			return true
		}
	}
	return false
}

// warning reports whether the tray should show its warning look: a pending takeover, a wedge
// diagnosis, a broken config, a hub problem the banner shows, or a failing routine.
func warning(s session.State) bool {
	if s.Pending != nil || len(s.Owner.Diagnoses) > 0 || s.ConfigErr != "" || len(hubLines(s)) > 0 {
		return true
	}
	for _, r := range s.Routines {
		if RoutineStatus(r, s.Now) == StatusFailing {
			return true
		}
	}
	return false
}
