package ownership

// The types below are what scheduler/, app/cli and app/desktop code against. The
// functions live in files with one job each (see doc.go): acquire.go (Acquire, Wait),
// takeover.go (Takeover), handle.go (Handle), inspect.go (Inspect), observer.go (Observer),
// statedir.go (StateDir).

import (
	"fmt"
	"log/slog"
	"time"
)

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
	// OnRequest is called when a valid takeover request addressed to this owner arrives and
	// Policy is PolicyAsk; answer with Handle.Decide. Calls come one at a time, in order, on a
	// goroutine of their own, so a slow callback never delays the heartbeat (it only delays the
	// next call).
	OnRequest func(Request)
	// EpochFloor, if set, returns the highest epoch known to another source (the journal); it is
	// called once per acquisition, with the guard held. An error fails the acquisition.
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
	Reply   *Reply   // for EventTakeoverResolved; nil when the request was withdrawn or expired
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

// OwnedError is returned when another process holds the guard.
type OwnedError struct {
	Holder *Record // owner.json as read; nil when missing, unreadable or not the live holder ("unknown")
	Status Status
}

// Error names the holder for a person: role, pid, host, since when and epoch, or what is known
// when owner.json does not describe the holder.
func (e *OwnedError) Error() string {
	r := e.Holder
	if r == nil {
		if e.Status.HolderPID != 0 {
			return fmt.Sprintf("%s (pid %d holds the guard; owner.json does not describe it)", ErrOwned, e.Status.HolderPID)
		}
		return ErrOwned.Error() + " (owner unknown: owner.json is missing or stale)"
	}
	return fmt.Sprintf("%s: %s pid %d on %s since %s, epoch %d", ErrOwned, r.Role, r.PID, r.Host,
		r.AcquiredAt.Local().Format(time.RFC3339), r.Epoch)
}

// Unwrap makes errors.Is(err, ErrOwned) true.
func (e *OwnedError) Unwrap() error { return ErrOwned }
