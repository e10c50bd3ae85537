// Package journal decides what happened to each slot: the SQLite run journal every run is
// claimed in before it starts, stamped with its owner's fencing epoch (docs/design.md#4-run-journal).
// A slot claimed once is never claimed again, a backward clock jump never re-claims a slot, and
// a fenced (older) owner can neither claim, finish, move an `every` anchor nor save a snapshot.
//
// Only the owner writes it: Open, then Acquire with the owner's epoch (a handle never acquired
// has epoch 0, so its claims are fenced; it adds only run-now requests and pauses). Observers
// (status, routines, history) use OpenReadOnly, which never writes and reads a missing or
// empty file as "nothing has run yet". A file that is not a Routinely journal is refused
// (ErrNotJournal) and left as it is.
//
// Files, one job each:
//
//	journal.go       Journal: Open, OpenBusy, OpenReadOnly, Close, Acquire, MaxEpoch
//	errors.go        sentinel errors
//	types.go         Run, triggers, outcomes
//	schema.go        the append-only migrations
//	check.go         telling a journal from anything else; MaxEpochOf, IsUnavailable
//	uri.go           URI: the one way a path reaches SQLite; the check that it opened that file
//	identity.go      Intact: journal.db on disk is the file open; Restore puts a deleted one back
//	private.go       creating the file 0600 before SQLite does
//	batch.go         the writer goroutine: group commit, savepoints, WaitWritable
//	claims.go        Claim and ClaimAll: the claim rule (claimSQL) and fencing
//	runs.go          Finish, History, Run, Output, latest slots and outcomes, retention
//	requests.go      run-now requests: RequestRun, PendingRequests, AnswerRequest
//	pauses.go        SetPaused, Resume, Pauses, PauseOf
//	arming.go        Arm: first-armed times and `every` grid anchors; Anchored
//	snapshots.go     page-watch snapshots
//	orphans.go       runs an earlier owner left running, their processes and tokens
package journal
