package scheduler

import "errors"

// Sentinel errors of the scheduler. Callers test them with errors.Is.
var (
	// ErrFenced: a journal write carries an epoch older than one already recorded.
	ErrFenced = errors.New("fenced: a newer owner epoch exists")
	// ErrSlotClaimed: the (routine, slot) pair was already claimed; the slot ran before.
	ErrSlotClaimed = errors.New("slot already claimed")
	// ErrUnknownRoutine: no routine of that name in the current configuration.
	ErrUnknownRoutine = errors.New("no such routine")
	// ErrNoRun: no run with that id in the journal.
	ErrNoRun = errors.New("no such run")
	// ErrReadOnly: a write through a journal opened with OpenJournalReadOnly.
	ErrReadOnly = errors.New("journal opened read-only")
	// ErrNotJournal: the file at the journal's path is not a Routinely journal (not SQLite,
	// another program's database, damaged, not a regular file); it is left untouched.
	ErrNotJournal = errors.New("not a Routinely journal")
)

// Internal sentinels: causes and conditions that never leave the package unwrapped.
var (
	errEngineOptions = errors.New("scheduler: NewEngine needs a Journal and a Gate")
	errNotAdmitting  = errors.New("not admitting runs: not the owner or yielding")
	errReplaced      = errors.New("replaced by a newer slot (overlap = replace)") // cancel cause
	errRunTimeout    = errors.New("routine timeout reached")                      // cancel cause
	errJournalClosed = errors.New("journal closed")
)
