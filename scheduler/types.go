package scheduler

// The shared types app/cli and app/desktop show: outcomes, triggers, policies, runs, states.

import (
	"time"
)

// Triggers (journal "trigger", env ROUTINELY_TRIGGER).
const (
	TriggerSchedule = "schedule"
	TriggerCatchUp  = "catch-up"
	TriggerManual   = "manual"
	TriggerRetry    = "retry"
)

// Outcomes (journal "outcome").
const (
	OutcomeRunning         = "running"
	OutcomeSuccess         = "success"
	OutcomeFailed          = "failed"
	OutcomeTimeout         = "timeout"
	OutcomeCrashed         = "crashed"
	OutcomeInterrupted     = "interrupted"
	OutcomeSkipped         = "skipped"
	OutcomeMissed          = "missed"
	OutcomeSelectorMissing = "selector-missing"
	OutcomeChanged         = "changed"
)

// Run is one row of the journal's run history. Nothing marshals it: the CLI's --json output has
// its own stable shapes (app/cli/jsonshapes.go).
type Run struct {
	ID         int64
	Routine    string
	Slot       time.Time // the scheduled instant; a manual run: when the owner took the request
	Trigger    string    // TriggerSchedule, TriggerCatchUp, TriggerManual or TriggerRetry
	Epoch      uint64    // the fencing epoch of the owner that claimed it
	Outcome    string    // OutcomeRunning until it finishes
	Reason     string    // e.g. "overlap", "paused"
	Started    *time.Time
	Finished   *time.Time
	LateBy     time.Duration // from Slot to Started (0 for a manual run)
	Duration   time.Duration // from Started to Finished; 0 until both are known
	ExitCode   *int          // nil when no process exited (not a command, or it never ran)
	Attempts   int
	OutputSize int // bytes of captured output (Journal.Output)
}

// RoutineState is what the CLI and the app show for one routine (the CLI's --json output has its
// own shape for it, as for Run).
type RoutineState struct {
	Name       string
	Schedule   string // in words, e.g. "every 30s", "at 08:00 Mon–Fri"
	Action     string // run | shell | watch | notify | ping
	Timezone   string
	Next       *time.Time
	Last       *Run
	Paused     bool
	PauseNote  string
	PauseUntil *time.Time
	Running    bool
	Disabled   string // validation message when invalid
}

// Notifier shows a desktop notification; the desktop app implements it with Fyne, the daemon
// by logging.
type Notifier interface {
	Notify(title, body string) error
}
