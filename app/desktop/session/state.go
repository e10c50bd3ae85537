package session

import (
	"time"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
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

// State is one snapshot of everything the window and the tray show (app/ui decides how). It is
// a plain value: Snapshot builds a new one each time, off the UI goroutine, and nothing in it is
// shared with the session afterwards.
type State struct {
	Mode       Mode
	Now        time.Time
	Owner      ownership.Status  // as an observer sees the state directory
	Self       *ownership.Record // this app's own record while it owns
	Pending    *ownership.Request
	Routines   []scheduler.RoutineState
	Problems   []config.Problem
	ConfigPath string
	ConfigErr  string // whole-file error ("FILE:LINE:COL: ..."), empty when the file loads
	Notice     string // a transient sentence for the owner panel (e.g. a failed take back)
	Policy     ownership.Policy
	AutoStart  bool // the login item points at this binary
	// Hub is what the live owner sees of the hub (connected, the devices, drift), from its
	// hub.json; nil without a [hub] or before the owner wrote it. Which device ran a run is
	// in Routines[i].Last.Device.
	Hub *hub.State
}
