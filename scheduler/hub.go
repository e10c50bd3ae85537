package scheduler

// The engine's side of sharing routines with other devices through a hub
// (docs/design.md#9-devices): the hub claim before the local one, the shared every-anchor, the
// definition hashes, and recording the runs of a device that died mid-run.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// hubBusyPoll is how often a slot waiting behind a run on another device (overlap = queue or
// replace) asks the hub again.
const hubBusyPoll = 250 * time.Millisecond

// claimMargin is how much longer than a routine's catch-up window (plus its jitter) the hub
// keeps a claim: no device tries a slot later than its catch-up window after it, so the claim
// is there whenever another device could still try the slot; the margin covers clocks that
// disagree by up to that much.
const claimMargin = time.Hour

// hubNext is what execute does after the hub claim.
type hubNext int

const (
	hubRun     hubNext = iota // the slot is this device's: claim it locally and run it
	hubHandled                // the slot was recorded (claimed elsewhere, overlap) or not started
	hubRefused                // the hub could not decide: keep the slot for a catch-up pass
)

// shared reports whether ev of r is decided on the hub: a scheduled or catch-up slot of a
// shared routine, with a hub. A run-now request runs on the device it was asked of.
func (e *Engine) shared(r *config.Routine, ev slotEvent) bool {
	return e.coord != nil && r.Shared && ev.trigger != journal.TriggerManual
}

// device is this device's name on the hub, "" without one.
func (e *Engine) device() string {
	if e.coord == nil {
		return ""
	}
	return e.coord.Device()
}

// claimKeep is how long r's claims must stay on the hub after their slot (claimMargin).
func claimKeep(r *config.Routine) time.Duration {
	return r.CatchUpWindow + r.Jitter + claimMargin
}

// hubClaim asks the hub for ev of r and handles every answer but a win: another device claimed
// it → recorded `skipped` with that device; the previous run still going on another device →
// the overlap policy (skip: recorded `skipped (overlap …)`; queue and replace: wait for it,
// asking again every hubBusyPoll, since a run on another device cannot be cancelled from
// here); the hub unreachable → hubRefused, so the slot is kept and caught up once the hub is
// back (or, with offline = "local", hubRun). ctx ending first records why it did not start.
func (e *Engine) hubClaim(ctx context.Context, r *config.Routine, ev slotEvent) (HubClaim, hubNext) {
	for {
		c, err := e.coord.Claim(ctx, r.Name, ev.slot, claimKeep(r))
		switch {
		case err != nil && ctx.Err() != nil:
			e.notStarted(r.Name, ev, context.Cause(ctx), false)
			return c, hubHandled
		case err != nil && e.coord.LocalWhenOffline():
			if !e.hubDown.Swap(true) {
				e.log.Warn(`hub unreachable: running shared routines on this device alone (offline = "local"), so a slot may also run on another device`,
					"routine", r.Name, "slot", ev.slot, "err", err)
			}
			return HubClaim{}, hubRun
		case err != nil:
			if !e.hubDown.Swap(true) {
				e.log.Warn("hub unreachable: shared routines do not run on this device until it is back; then the missed slots are caught up once",
					"routine", r.Name, "slot", ev.slot, "err", err)
			}
			return c, hubRefused
		}
		if e.hubDown.Swap(false) {
			e.log.Info("hub reachable again", "routine", r.Name, "slot", ev.slot)
		}
		switch c.Verdict {
		case HubWon:
			if storeForgot(c, ev) {
				e.coord.Release(c, "")
				e.record(r.Name, ev, journal.OutcomeMissed, fmt.Sprintf(
					"the hub's store began at %s, after this slot (wiped?): another device may have run it, so it does not run here",
					c.Since.Local().Format("2006-01-02 15:04:05.000")))
				return c, hubHandled
			}
			return c, hubRun
		case HubElsewhere:
			ev.device = c.Device
			e.record(r.Name, ev, journal.OutcomeSkipped, "claimed by "+c.Device)
			return c, hubHandled
		}
		if r.Overlap == config.OverlapSkip {
			e.record(r.Name, ev, journal.OutcomeSkipped, fmt.Sprintf("overlap: running on %s", c.Device))
			return c, hubHandled
		}
		if !e.waitUntil(e.clock.Now().Add(hubBusyPoll), ctx.Done()) {
			e.notStarted(r.Name, ev, context.Cause(ctx), false)
			return c, hubHandled
		}
	}
}

// storeForgot reports whether the hub that gave c decided on a store that began after ev's
// slot: a wiped store forgets every claim, so a slot before the wipe may have run on another
// device, whose claim is gone; winning it now proves nothing and running it could run it twice
// (a standby taking over just after a wipe catches up the slot the others ran a moment before).
// Such a slot is recorded missed instead, so it is not lost without a word. Slots after the store
// began are claimed as always; a hub restarted on its store keeps its creation time.
func storeForgot(c HubClaim, ev slotEvent) bool {
	return !c.Since.IsZero() && ev.slot.Before(c.Since)
}

// supersededReason is why catch-up records an older slot of r missed: superseded by a later
// one, and, for a shared routine while the hub cannot be reached, that the hub was why it did
// not run here.
func (e *Engine) supersededReason(r *config.Routine) string {
	if e.coord != nil && r.Shared && e.hubDown.Load() {
		return "hub unreachable; superseded by a later slot"
	}
	return "superseded by a later slot"
}

// sameHub reports whether two [hub] tables (nil: none) configure the same hub session.
func sameHub(a, b *config.Hub) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Line, x.Col, y.Line, y.Col = 0, 0, 0, 0
	return x == y
}

// hubAnchors returns the every-anchor the devices share for each shared `every` routine of cfg
// (nil without a hub; routines the hub could not answer for are left out and keep this
// device's own anchor until they are armed again). The anchors this device's journal keeps go
// with the question: a hub that lost its own (a wiped store) gets this device's grid back rather
// than a new one (docs/design.md#96-shared-every-anchor-and-config-drift).
func (e *Engine) hubAnchors(cfg *config.Config, now time.Time) map[string]time.Time {
	if e.coord == nil {
		return nil
	}
	every := map[string]time.Duration{}
	for _, r := range cfg.Routines {
		if r.Shared && r.Kind == config.KindEvery {
			every[r.Name] = r.Every
		}
	}
	if len(every) == 0 {
		return nil
	}
	local, err := e.j.Anchors(cfg)
	if err != nil {
		e.log.Warn("read the every-anchors this device armed; the hub's are used as they are", "err", err)
		local = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return e.coord.Anchors(ctx, every, local, now)
}

// publishDefinitions tells the other devices how cfg defines each shared routine, and the
// coordinator the grid armed for each shared `every` routine. e.mu is held.
func (e *Engine) publishDefinitions(cfg *config.Config) {
	if e.coord == nil {
		return
	}
	defs := map[string]string{}
	for _, r := range cfg.Routines {
		if r.Shared {
			defs[r.Name] = config.DefinitionHash(r)
		}
	}
	e.coord.Publish(defs, e.armedAnchorsLocked())
}

// armedAnchorsLocked returns the grid armed for each shared `every` routine. e.mu is held.
func (e *Engine) armedAnchorsLocked() map[string]Anchor {
	armed := map[string]Anchor{}
	for name, a := range e.routines {
		if a.r.Shared && a.r.Kind == config.KindEvery && !a.r.Anchor.IsZero() {
			armed[name] = Anchor{Every: a.r.Every, At: a.r.Anchor}
		}
	}
	return armed
}

// moveAnchor re-arms the shared `every` routine on the devices' grid a, when it is still armed
// with a.Every on another anchor (the Coordinator's move callback: after a wiped hub, another
// device armed another grid, and the earliest one is kept: docs/design.md#96-shared-every-anchor-and-config-drift).
// The anchor is persisted first; a fenced owner moves nothing.
func (e *Engine) moveAnchor(routine string, to Anchor) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.routines[routine]
	if e.stopping || a == nil || a.r.Kind != config.KindEvery || a.r.Every != to.Every || a.r.Anchor.Equal(to.At) {
		return
	}
	if err := e.j.SetAnchors(map[string]time.Time{routine: to.At}); err != nil {
		e.log.Warn("could not move an every-routine to the devices' grid", "routine", routine, "anchor", to.At, "err", err)
		return
	}
	r := *a.r
	from := r.Anchor
	r.Anchor = to.At
	a.r, a.sched = &r, r.Slots(to.At)
	if err := e.armLocked(a); err != nil {
		e.log.Error("re-arm on the devices' grid", "routine", routine, "err", err)
		return
	}
	e.log.Warn("every-routine moved to the grid the other devices run (the hub had another; the earliest is kept)",
		"routine", routine, "from", from, "to", to.At)
	if e.cfg != nil {
		e.publishDefinitions(e.cfg)
	}
}

// settleElsewhere records in this device's journal that the run of slot of routine on device
// was cut short (the Coordinator's settle callback).
func (e *Engine) settleElsewhere(routine string, slot time.Time, device, reason string) {
	err := e.j.SettleElsewhere(routine, slot, device, reason, e.clock.Now())
	switch {
	case errors.Is(err, journal.ErrFenced):
		e.log.Info("not recording another device's interrupted run: this owner is fenced", "routine", routine, "device", device)
	case err != nil:
		e.log.Error("record another device's interrupted run", "routine", routine, "slot", slot, "device", device, "err", err)
	default:
		e.log.Warn("run interrupted on another device", "routine", routine, "slot", slot, "device", device, "reason", reason)
		e.changed()
	}
}
