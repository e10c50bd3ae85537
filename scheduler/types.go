package scheduler

// The shared types app/cli and app/desktop show: outcomes, triggers, policies, runs, states.

import "time"

// Overlap policies (routines.toml "overlap").
const (
	OverlapSkip    = "skip"
	OverlapQueue   = "queue"
	OverlapReplace = "replace"
)

// Catch-up policies (routines.toml "catch_up").
const (
	CatchUpOnce = "once"
	CatchUpSkip = "skip"
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

// Problem is one validation finding in routines.toml, printed as "file:line:col: message".
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Routine string `json:"routine,omitempty"` // empty for file-level problems
	Message string `json:"message"`
}

// Run is one row of the journal's run history.
type Run struct {
	ID         int64         `json:"id"`
	Routine    string        `json:"routine"`
	Slot       time.Time     `json:"slot"`
	Trigger    string        `json:"trigger"`
	Epoch      uint64        `json:"epoch"`
	Outcome    string        `json:"outcome"`
	Reason     string        `json:"reason,omitempty"` // e.g. "overlap", "paused"
	Started    *time.Time    `json:"started,omitempty"`
	Finished   *time.Time    `json:"finished,omitempty"`
	LateBy     time.Duration `json:"late_by_ns"`
	Duration   time.Duration `json:"duration_ns"`
	ExitCode   *int          `json:"exit_code,omitempty"`
	Attempts   int           `json:"attempts"`
	OutputSize int           `json:"output_bytes"`
}

// RoutineState is what the CLI and the app show for one routine.
type RoutineState struct {
	Name       string     `json:"name"`
	Schedule   string     `json:"schedule"` // in words, e.g. "every 30s", "at 08:00 Mon–Fri"
	Action     string     `json:"action"`   // run | shell | watch | notify | ping
	Timezone   string     `json:"timezone"`
	Next       *time.Time `json:"next,omitempty"`
	Last       *Run       `json:"last,omitempty"`
	Paused     bool       `json:"paused"`
	PauseNote  string     `json:"pause_note,omitempty"`
	PauseUntil *time.Time `json:"pause_until,omitempty"`
	Running    bool       `json:"running"`
	Disabled   string     `json:"disabled,omitempty"` // validation message when invalid
}

// Notifier shows a desktop notification; the desktop app implements it with Fyne, the daemon
// by logging.
type Notifier interface {
	Notify(title, body string) error
}
