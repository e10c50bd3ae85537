package scheduler

// The interfaces and types app/cli, app/owning and app/desktop use.

import (
	"context"
	"time"
)

// Gate is the slice of *ownership.Handle the engine needs (ownership.Handle satisfies it).
type Gate interface {
	Epoch() uint64
	Admitting() bool
	BeginRun(routine string, slot time.Time) (done func(), err error)
	NoteTick(nextDue time.Time)
}

// Coordinator shares an owner's routines with the owners of other devices through a hub, so
// each slot of a shared routine runs on one device (docs/design.md#9-devices). The engine asks
// it before the local claim of every scheduled slot of a shared routine. nil in EngineOptions:
// this device runs every routine alone, exactly as without a hub.
type Coordinator interface {
	// Start begins this owner's session on the hub: journalID and epoch name its claims, and
	// settle is called (on the coordinator's goroutine; it must not block for long) for each
	// run of a device that stopped answering mid-run whose end this device recorded on the hub.
	// move is called (likewise) when the devices' shared grid of an `every` routine this device
	// armed (Publish) is another one: this device re-arms the routine on a.
	Start(journalID string, epoch uint64, settle func(routine string, slot time.Time, device, reason string), move func(routine string, a Anchor)) error
	// Stop ends the session: the liveness key is deleted, so the other devices take over at
	// once. The engine calls it once its runs have ended.
	Stop()
	// Device is this device's name on the hub.
	Device() string
	// Claim decides on the hub which device runs slot of routine, before any side effect. keep
	// is how long the claim must outlive the slot (the latest a device could still try it).
	// Errors: ErrHubUnreachable (wrapped) when the hub cannot decide; ctx's error.
	Claim(ctx context.Context, routine string, slot time.Time, keep time.Duration) (HubClaim, error)
	// Release ends a won claim once the run is over (outcome: how it ended; "" when it did not
	// run here after all), so the routine's run is no longer held on the hub. It never blocks
	// for long: a hub that cannot be reached gets it once it can.
	Release(c HubClaim, outcome string)
	// Anchors returns the every-grid anchor the devices share for each routine of every
	// (routine → interval): the hub's when it has one for that interval and this device's own
	// (local: routine → the anchor its journal keeps for that interval) is not an earlier other
	// grid; else local, or now (truncated to the second) without one, which the hub then keeps.
	// Routines it cannot get (hub unreachable) are left out.
	Anchors(ctx context.Context, every map[string]time.Duration, local map[string]time.Time, now time.Time) map[string]time.Time
	// Publish tells the other devices the definition hash of each shared routine
	// (config.DefinitionHash), so that a routine defined differently is reported on both, and
	// tells the coordinator the grid this device armed for each shared `every` routine, which it
	// keeps on the hub (published again when the hub lost it).
	Publish(defs map[string]string, armed map[string]Anchor)
	// LocalWhenOffline reports whether [hub] offline = "local": shared routines run here alone
	// while the hub cannot be reached.
	LocalWhenOffline() bool
}

// Anchor is the grid of an `every` routine: its interval and the time its slots count from.
type Anchor struct {
	Every time.Duration
	At    time.Time
}

// HubVerdict is what the hub decided about one slot.
type HubVerdict int

const (
	// HubWon: this device runs the slot.
	HubWon HubVerdict = iota + 1
	// HubElsewhere: another device claimed the slot (HubClaim.Device).
	HubElsewhere
	// HubBusy: the routine's previous run is still going on another device (HubClaim.Device,
	// HubClaim.Running): the overlap policy applies.
	HubBusy
)

// HubClaim is a Coordinator's answer to Claim.
type HubClaim struct {
	Verdict HubVerdict
	Device  string    // the device that won the slot, or whose run is in the way
	Running time.Time // HubBusy: the slot of the run in the way
	Routine string
	Slot    time.Time
	// Rev is the revision of the routine's run key this claim holds (HubWon), for Release.
	Rev uint64
	// Since is when the hub's store that decided began (its bucket was created), by the hub's
	// clock; zero when unknown. A slot before it may have been claimed, and run, by another
	// device in a store that is gone (a wiped hub): the hub cannot vouch for it (storeForgot).
	Since time.Time
}
