package journal

// The rows the journal records: runs, their triggers and outcomes.

import "time"

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
	// Device is the device that claimed the slot on the hub ("" without a hub): this device's
	// name for its own runs, another one's for a slot that device ran.
	Device string
}
