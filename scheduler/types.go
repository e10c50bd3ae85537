package scheduler

// The shared types app/cli and app/desktop show: routine states, notifications.

import (
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// RoutineState is what the CLI and the app show for one routine (the CLI's --json output has its
// own shape for it, as for Run).
type RoutineState struct {
	Name     string
	Schedule string // in words, e.g. "every 30s", "at 08:00 Mon–Fri"
	Action   string // run | shell | watch | notify | ping
	Timezone string
	// OwnZone: the routine names its timezone in routines.toml (else it follows the system's).
	OwnZone bool
	Next    *time.Time
	// Overdue is the oldest slot that is past and not handled yet (nobody claimed it: the owner
	// is stuck, or none runs); nil when every past slot is handled, while paused, or before the
	// routine has any slot recorded.
	Overdue *time.Time
	Last    *journal.Run
	Paused  bool
	// PausedInFile: the routine has paused = true in routines.toml, which only an edit of the
	// file undoes (a resume through the journal does not).
	PausedInFile bool
	PauseNote    string
	PauseUntil   *time.Time
	Running      bool
	Disabled     string // validation message when invalid
}

// Notifier shows a desktop notification; the desktop app implements it with Fyne, the daemon
// by logging.
type Notifier interface {
	Notify(title, body string) error
}

// WarningNotifier is a Notifier that can show a notification as a warning (the desktop gives it
// a warning icon). The engine sends the alerts about a routine failing, its selector matching
// nothing, and its auto-pause through Warn when its Notifier has it, and through Notify
// otherwise.
type WarningNotifier interface {
	Notifier
	Warn(title, body string) error
}

// OverdueGrace is how long a slot may be past without being handled before its routine is
// called overdue: the claim comes 50 ms before the slot, but jitter and a busy machine make a
// few seconds normal.
const OverdueGrace = 30 * time.Second

// IsOverdue reports whether a slot of s has been past for more than OverdueGrace at now without
// being handled. A routine with a run in flight is not (the run holds its next slots back), nor
// a paused one.
func (s RoutineState) IsOverdue(now time.Time) bool {
	return s.Overdue != nil && !s.Running && !s.Paused && now.Sub(*s.Overdue) > OverdueGrace
}
