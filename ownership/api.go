package ownership

// CONTRACT FILE: the signatures below are what scheduler/, app/cli and app/desktop code against.
// The ownership implementer fills in the bodies (moving them into files with one job each) and
// may add to the API, but must not change these signatures without updating every caller.

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

var errTODO = errors.New("ownership: not implemented yet")

// Policy says how an owner answers takeover requests.
type Policy string

// Policies. PolicyAsk hands the request to Options.OnRequest and waits for Handle.Decide.
const (
	PolicyAllow Policy = "allow"
	PolicyDeny  Policy = "deny"
	PolicyAsk   Policy = "ask"
)

// DefaultHeartbeat is the heartbeat interval used when Options.HeartbeatInterval is zero.
const DefaultHeartbeat = 2 * time.Second

// Options configure an ownership attempt on one state directory.
type Options struct {
	Dir               string        // state directory, already resolved by StateDir
	Role              Role          // desktop or daemon
	Version           string        // written to owner.json
	HeartbeatInterval time.Duration // 0 → DefaultHeartbeat
	Policy            Policy        // how takeover requests are answered ("" → PolicyAllow)
	// OnRequest is called (from the heartbeat goroutine, must not block) when a valid takeover
	// request addressed to this owner arrives and Policy is PolicyAsk; answer with Handle.Decide.
	OnRequest func(Request)
	// EpochFloor, if set, returns the highest epoch known to another source (the journal).
	EpochFloor func() (uint64, error)
	Logger     *slog.Logger
}

// EventKind names something that happened to an owner, for the UI and logs.
type EventKind string

// Event kinds delivered on Handle.Events.
const (
	EventTakeoverRequested EventKind = "takeover-requested"
	EventTakeoverResolved  EventKind = "takeover-resolved"
	EventGuardReplaced     EventKind = "guard-replaced"
	EventWriteFailed       EventKind = "write-failed"
	EventYielding          EventKind = "yielding"
	EventReleased          EventKind = "released"
)

// Event is one notification from a Handle.
type Event struct {
	Kind    EventKind
	Request *Request // for takeover events
	Reply   *Reply   // for EventTakeoverResolved
	Err     error    // for EventWriteFailed / EventGuardReplaced
	At      time.Time
}

// TakeoverProgress is reported to a challenger while it waits.
type TakeoverProgress struct {
	Owner    *Record  // who is being asked (nil when unknown)
	Decision Decision // pending once the owner has seen the request, "" before
	Waited   time.Duration
}

// TakeoverOptions configure Takeover.
type TakeoverOptions struct {
	Timeout        time.Duration          // deadline for the whole handshake (0 → 60 s)
	Reason         string                 // shown to the owner's user
	KillWedged     bool                   // after the deadline, end a verifiably wedged owner
	WedgeThreshold time.Duration          // stale heartbeat needed for KillWedged (0 → 30 s)
	Progress       func(TakeoverProgress) // called on each change (may be nil)
}

// Handle is held by the owning process for as long as it owns.
type Handle struct{}

// Acquire tries once to take the guard of opts.Dir. It returns a Handle that owns, or an error:
// *OwnedError (errors.Is ErrOwned) naming the holder when another process holds the guard,
// ErrHeldInProcess when this process already owns, ErrUnsafeDir for an unsafe directory, or an
// I/O error (wrapped) when the directory cannot be used.
func Acquire(ctx context.Context, opts Options) (*Handle, error) { return nil, errTODO }

// Wait stands by until this process owns opts.Dir (polling the guard every 50 ms and waking on
// file changes), or ctx ends (ctx.Err()). Other errors as for Acquire, except ErrOwned.
func Wait(ctx context.Context, opts Options) (*Handle, error) { return nil, errTODO }

// Takeover asks the current owner to step aside and returns a Handle once this process owns.
// Errors: ErrDenied (owner said no), ErrTakeoverTimeout (no yield before the deadline; the request
// is withdrawn), ctx.Err() (request withdrawn), ErrNotWedged (KillWedged refused), plus those of
// Acquire. With no owner it simply acquires.
func Takeover(ctx context.Context, opts Options, t TakeoverOptions) (*Handle, error) {
	return nil, errTODO
}

// OwnedError is returned when another process holds the guard.
type OwnedError struct {
	Holder *Record // owner.json as read; nil when missing or unreadable ("unknown")
	Status Status
}

func (e *OwnedError) Error() string { return ErrOwned.Error() }

// Unwrap makes errors.Is(err, ErrOwned) true.
func (e *OwnedError) Unwrap() error { return ErrOwned }

// Epoch returns this owner's fencing epoch (strictly greater than every earlier owner's).
func (h *Handle) Epoch() uint64 { return 0 }

// Token returns this owner's random token (takeover requests are addressed to it).
func (h *Handle) Token() string { return "" }

// Record returns a copy of the owner record as last written.
func (h *Handle) Record() Record { return Record{} }

// Admitting reports whether new runs may start (false once yielding, released or guard lost).
func (h *Handle) Admitting() bool { return false }

// BeginRun admits one run and counts it in flight until done is called. It returns
// ErrNotAdmitting when the owner is yielding, released or has lost its guard.
func (h *Handle) BeginRun(routine string, slot time.Time) (done func(), err error) {
	return nil, ErrNotAdmitting
}

// NoteTick records scheduler progress: one slot handled, and the next slot due (zero: none).
func (h *Handle) NoteTick(nextDue time.Time) {}

// Events delivers takeover, guard and write events; the channel is closed after release.
func (h *Handle) Events() <-chan Event { return nil }

// Lost is closed when this handle no longer owns (released, yielded or guard replaced).
func (h *Handle) Lost() <-chan struct{} { return nil }

// Decide answers a pending takeover request (PolicyAsk). ErrNoRequest if id is not pending.
func (h *Handle) Decide(requestID string, approve bool) error { return errTODO }

// Pending returns the takeover request awaiting a decision, if any.
func (h *Handle) Pending() *Request { return nil }

// Release stops admitting runs, waits for in-flight runs (or ctx), writes state "released" and
// unlocks the guard. If ctx ends while runs are in flight it keeps the guard and returns ctx.Err().
func (h *Handle) Release(ctx context.Context) error { return errTODO }

// Inspect reports, without taking ownership, who owns dir and every diagnosis that applies now.
func Inspect(dir string) (Status, error) { return Status{}, errTODO }

// StateDir resolves and prepares the state directory: override (from --home or ROUTINELY_HOME)
// if non-empty, else the per-OS default. It creates it 0700 and returns its canonical path, or
// ErrUnsafeDir (wrapped, with the reason and what to do).
func StateDir(override string) (string, error) { return "", errTODO }
