package ownership

import "errors"

// Sentinel errors of the ownership protocol. Callers test them with errors.Is; the concrete
// errors returned carry detail (for example *OwnedError names the holder).
var (
	// ErrOwned: the guard is held by another live process (the kernel says so).
	ErrOwned = errors.New("routines are owned by another process")
	// ErrHeldInProcess: this process already owns the guard through another Handle.
	ErrHeldInProcess = errors.New("this process already owns the routines")
	// ErrDenied: the owner answered a takeover request with "denied".
	ErrDenied = errors.New("takeover denied by the owner")
	// ErrTakeoverTimeout: the owner did not yield before the challenger's deadline.
	ErrTakeoverTimeout = errors.New("takeover timed out")
	// ErrNotAdmitting: the handle no longer admits new runs (yielding, released or guard lost).
	ErrNotAdmitting = errors.New("owner is not admitting new runs")
	// ErrReleased: the handle has released ownership.
	ErrReleased = errors.New("ownership released")
	// ErrHandoverFailed: the handle let go of the guard for an approved takeover, but the
	// requester did not become the owner within handoverWait and nobody else did either: the
	// routines are free, and the process should own them again (Acquire).
	ErrHandoverFailed = errors.New("approved takeover did not complete")
	// ErrGuardReplaced: owner.lock on disk is no longer the file whose lock this process holds.
	ErrGuardReplaced = errors.New("guard file was deleted or replaced")
	// ErrUnsafeDir: the state directory is a symlink to another user's directory, owned by another
	// uid, open to its group or others, or on a network/FUSE filesystem where locks are not
	// shared; or its owner.lock is not a regular file.
	ErrUnsafeDir = errors.New("state directory is not safe to use")
	// ErrNotWedged: kill-wedged refused because the owner is not verifiably wedged.
	ErrNotWedged = errors.New("owner is not verifiably wedged")
	// ErrTakenByOther: kill-wedged ended the wedged owner, but another process (a standby) won
	// the guard first.
	ErrTakenByOther = errors.New("another process took the routines first")
	// ErrStillDraining: kill-wedged signalled the wedged owner, which still holds the guard: it
	// resumed and is finishing its runs in flight.
	ErrStillDraining = errors.New("the owner still holds the routines")
	// ErrNoRequest: Decide was called with an unknown or expired takeover request id.
	ErrNoRequest = errors.New("no such pending takeover request")
	// ErrUnknownPolicy: SetPolicy was given a policy other than allow, deny or ask.
	ErrUnknownPolicy = errors.New("unknown takeover policy (want allow, deny or ask)")
	// ErrEpochFloorUnavailable: Options.EpochFloor could not read its source for now (the
	// journal is locked by another process, say). EpochFloor wraps it to make Wait try again;
	// Acquire returns it (wrapped).
	ErrEpochFloorUnavailable = errors.New("the highest epoch cannot be read for now")
)

// errGarbage marks a state file that exists but does not hold what it should (empty, torn, not
// JSON). Readers treat it as missing; the next owner rewrites the file.
var errGarbage = errors.New("unreadable")
