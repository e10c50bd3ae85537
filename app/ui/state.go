package ui

import (
	"time"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
)

// Mode is what this app is doing about the schedule.
type Mode int

// Modes, in the order the lifecycle usually passes through them.
const (
	ModeStarting   Mode = iota // before the first ownership attempt
	ModeOwning                 // this app holds the guard and runs the routines
	ModeStandby                // another process owns; this app observes and waits
	ModeTakingBack             // a takeover request to the current owner is in flight
	ModeStopping               // Quit: draining and releasing
)

// State is one snapshot of everything the window and the tray show. It is a plain value built
// off the UI goroutine, handed to TrayPresenter.Apply and, on the UI goroutine, to
// Presenter.Apply.
type State struct {
	Mode       Mode
	Now        time.Time
	Owner      ownership.Status  // as an observer sees the state directory
	Self       *ownership.Record // this app's own record while it owns
	Pending    *ownership.Request
	Routines   []scheduler.RoutineState
	Problems   []scheduler.Problem
	ConfigPath string
	ConfigErr  string // whole-file error ("FILE:LINE:COL: ..."), empty when the file loads
	Notice     string // a transient sentence for the owner panel (e.g. a failed take back)
	Policy     ownership.Policy
	AutoStart  bool // the login item points at this binary
}

// ownerRecord returns the record to show: this app's own while it owns, else the observed one.
func (s State) ownerRecord() *ownership.Record {
	if s.Mode == ModeOwning && s.Self != nil {
		return s.Self
	}
	return s.Owner.Record
}

// AllPaused reports whether every routine is paused (the tray's Pause all is then disabled).
func (s State) AllPaused() bool {
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

// AnyPaused reports whether some routine is paused (the tray's Resume all has something to do).
func (s State) AnyPaused() bool {
	for _, r := range s.Routines {
		if r.Paused {
			return true
		}
	}
	return false
}

// Warning reports whether the tray should show its warning look: a pending takeover, a wedge
// diagnosis, a broken config or a failing routine.
func (s State) Warning() bool {
	if s.Pending != nil || len(s.Owner.Diagnoses) > 0 || s.ConfigErr != "" {
		return true
	}
	for _, r := range s.Routines {
		if RoutineStatus(r, s.Now) == StatusFailing {
			return true
		}
	}
	return false
}
