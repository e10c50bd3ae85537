package journal

import "errors"

// Sentinel errors of the journal. Callers test them with errors.Is.
var (
	// ErrFenced: a journal write carries an epoch older than one already recorded.
	ErrFenced = errors.New("fenced: a newer owner epoch exists")
	// ErrSlotClaimed: the (routine, slot) pair was already claimed; the slot ran before.
	ErrSlotClaimed = errors.New("slot already claimed")
	// ErrNoRun: no run with that id in the journal.
	ErrNoRun = errors.New("no such run")
	// ErrReadOnly: a write through a journal opened with OpenReadOnly.
	ErrReadOnly = errors.New("journal opened read-only")
	// ErrNotJournal: the file at the journal's path is not a Routinely journal (not SQLite,
	// another program's database, damaged, not a regular file); it is left untouched.
	ErrNotJournal = errors.New("not a Routinely journal")
	// ErrOpenedElsewhere: SQLite opened a file other than the journal's path (URI, opened);
	// nothing is read from or written to it.
	ErrOpenedElsewhere = errors.New("SQLite opened another file than the journal")
	// ErrReplaced: the file at the journal's path is no longer the one this handle has open (it
	// was deleted, or another file was put in its place): a claim written now would not be in
	// journal.db on disk (Intact).
	ErrReplaced = errors.New("journal.db was deleted or replaced while open")
	// ErrRestoredBeside: AdoptRestored found an earlier owner's put-back copy beside a journal
	// made since; both are left as they are.
	ErrRestoredBeside = errors.New("a put-back journal copy is beside another journal")
	// ErrClosed: a write through a journal after its Close.
	ErrClosed = errors.New("journal closed")
)
