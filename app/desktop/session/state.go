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
	Owner      ownership.Status  // as an observer sees the state directory (Handle.Status while this app owns)
	Self       *ownership.Record // this app's own record while it owns
	Pending    *ownership.Request
	Routines   []scheduler.RoutineState
	Problems   []config.Problem
	ConfigPath string
	ConfigErr  string // whole-file error ("FILE:LINE:COL: ..."), empty when the file loads
	// ConfigProblem is ConfigErr with its position (nil when the file loads).
	ConfigProblem *config.Problem
	// LastGood: routines.toml cannot be used (ConfigProblem says why), and Routines are its last
	// good version, which the owner runs.
	LastGood  bool
	Notice    string // a transient sentence for the owner panel (e.g. a failed take back)
	Policy    ownership.Policy
	AutoStart bool // the login item points at this binary
	// Stuck is set while this app stands by (ModeStandby) and the owner has stopped heartbeating
	// (suspended or wedged); nil otherwise.
	Stuck *StuckOwner
	// Hub is what the live owner sees of the hub (connected, the devices, drift), from its
	// hub.json; nil without a [hub] or before the owner wrote it. Which device ran a run is
	// in Routines[i].Last.Device.
	Hub *hub.State
}

// StuckOwner is an owner that has stopped heartbeating, as this app's observer judges it by the
// kill-wedged rules (docs/design.md#39-kill-wedged): whether, and from when, the person may end
// it from the window (Session.EndStuckOwner).
type StuckOwner struct {
	PID  int
	Role ownership.Role
	// Since is the owner's last heartbeat.
	Since time.Time
	// EndableIn is how much longer the silence must hold before the owner may be ended: 0 when it
	// may be ended now. Meaningless when Refused is set.
	EndableIn time.Duration
	// Refused, when not empty, says why this owner may not be ended from here at all (it runs on
	// another host or as another user, or its disk is full).
	Refused string
}
