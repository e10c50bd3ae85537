package action

// Outcome strings of a Result. They equal the scheduler's Outcome* constants (scheduler/types.go)
// character for character: this package cannot import scheduler (scheduler imports action), so
// the values are repeated here and the scheduler stores them as they are.
const (
	OutcomeSuccess         = "success"
	OutcomeFailed          = "failed"
	OutcomeTimeout         = "timeout"
	OutcomeCrashed         = "crashed"
	OutcomeInterrupted     = "interrupted"
	OutcomeSelectorMissing = "selector-missing"
	OutcomeChanged         = "changed"
)

// Limits shared by the actions (the README documents them).
const (
	// MaxOutput is the most combined output a run keeps, in bytes (64 KiB), truncation note
	// included.
	MaxOutput = 64 << 10
	// SnapshotsKept is how many page-watch snapshots the store keeps per routine.
	SnapshotsKept = 50
	// MaxRetries is the largest `retries` value routines.toml accepts.
	MaxRetries = 5
	// SelectorMissingAlertAfter is how many selector-missing runs in a row raise one alert.
	SelectorMissingAlertAfter = 3
)
