package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// maxMissedRows bounds how many missed slots are recorded one by one per catch-up; older ones
// are recorded as one `missed` row that names how many and since when (never silently dropped,
// and an `every = "1s"` routine after a week off does not write 600,000 rows).
const maxMissedRows = 100

// catchUpAll runs the catch-up pass for every routine (after a wake, a clock jump or a zone
// change).
func (e *Engine) catchUpAll(why string) {
	last, err := e.j.LastSlots()
	if err != nil {
		e.log.Error("catch-up", "err", err)
		return
	}
	_ = e.catchUpWith(e.names(), last, false, why)
}

// catchUpWith runs the pass for the routines names with their latest claimed slots already read
// (last). start marks a new owner's first pass: last was read before its timers were armed. It
// returns the routines it could not handle because the gate stopped admitting (nil when none).
func (e *Engine) catchUpWith(names []string, last map[string]time.Time, start bool, why string) (skipped []string) {
	now := e.clock.Now()
	for _, name := range names {
		if !e.catchUpFrom(name, now, last[name], start) {
			skipped = append(skipped, name)
		}
	}
	e.log.Debug("catch-up pass done", "why", why, "skipped", len(skipped))
	return skipped
}

// runStartPass runs the start's catch-up pass for the routines it has not handled yet, once the
// gate admits. Start calls it, and so does the request poller (every 0.5 s): an owner can yield
// to a takeover request before its start pass and resume when the request is withdrawn, and
// its timers only handle slots after the arm time, so without the pass the slots missed before
// it started would never be accounted for.
//
// The pass checks the slots missed before this owner started against the schedules armed at
// the start (the ones they were missed under), so a config reload or a zone change waits until
// it is done (Reload, checkZone): startLast stays set until then. Only Start and the poller call
// it, one after the other, so no two passes run at once.
func (e *Engine) runStartPass() {
	if !e.gate.Admitting() {
		return
	}
	e.mu.Lock()
	last := e.startLast
	e.mu.Unlock()
	if last == nil {
		return
	}
	names := slices.Sorted(maps.Keys(last))
	var rest map[string]time.Time // nil: done
	if skipped := e.catchUpWith(names, last, true, "acquired ownership"); len(skipped) > 0 {
		rest = make(map[string]time.Time, len(skipped))
		for _, name := range skipped {
			rest[name] = last[name]
		}
	}
	e.mu.Lock()
	e.startLast = rest
	reload := rest == nil && e.reloadDeferred
	if reload {
		e.reloadDeferred = false
	}
	e.mu.Unlock()
	if reload {
		e.Reload()
	}
}

// pendStartPass records that the start's catch-up pass is due for every armed routine, with
// last, the latest claimed slots read before arming (runStartPass). A retry after the gate
// stopped admitting mid-pass covers only the routines not handled yet: the start pass is not
// bounded by the slots dispatched since, so running it again for a handled routine would look
// back to its first arming (and record missed the slots that ran, where keep_runs pruned them).
func (e *Engine) pendStartPass(last map[string]time.Time) {
	pending := make(map[string]time.Time, len(last))
	for _, name := range e.names() {
		pending[name] = last[name]
	}
	e.mu.Lock()
	e.startLast = pending
	e.mu.Unlock()
}

// catchUpRefused runs the catch-up pass of each routine that has slots whose run the gate
// refused (armed.refused), once the gate admits again: the owner yielded to a takeover and
// resumed when the request was withdrawn. The request poller calls it every 0.5 s, so the
// slots are handled within a poll of the resume, not at the routine's next timer (which for a
// daily routine is a day later).
func (e *Engine) catchUpRefused() {
	if !e.gate.Admitting() {
		return
	}
	var names []string
	e.mu.Lock()
	for name, a := range e.routines {
		if len(a.refused) > 0 {
			names = append(names, name)
		}
	}
	e.mu.Unlock()
	now := e.clock.Now()
	for _, name := range names {
		e.catchUp(name, now)
	}
}

// catchUp handles routine name's slots that passed without a run: those in
// (max(last claimed slot, first armed, last dispatched slot), now] (the start pass leaves out
// the dispatched slot: see catchUpFrom), and those dispatched whose run the gate refused
// (armed.refused). The latest runs once with trigger catch-up when
// catch_up = once and it is within catch_up_window (late-by recorded); otherwise it is recorded
// missed. Every older one is recorded missed. Never silently dropped, never a burst.
func (e *Engine) catchUp(name string, now time.Time) {
	last, err := e.j.LastSlot(name)
	if err != nil {
		e.log.Error("catch-up", "routine", name, "err", err)
		return
	}
	_ = e.catchUpFrom(name, now, last, false) // not admitting: the next fire or pass handles them
}

// catchUpFrom is catchUp with the routine's latest claimed slot already read. In the start
// pass (start), the slots this engine's timers dispatched do not bound the pass: a new owner's
// first timer fires claimLead before its slot, possibly before this pass, and bounding by that
// slot lost the one missed just before it while the old owner yielded (found by the chaos test;
// TestCatchUpAfterAnEarlyFirstTimer). The start's last was read before arming for the same
// reason.
func (e *Engine) catchUpFrom(name string, now, last time.Time, start bool) (handled bool) {
	if !e.gate.Admitting() {
		return false
	}
	e.mu.Lock()
	a := e.routines[name]
	if a == nil || e.stopping {
		e.mu.Unlock()
		return true // nothing left to handle
	}
	r, sched, from := a.r, a.sched, a.firstArmed
	bounds := []time.Time{last}
	if !start {
		bounds = append(bounds, a.dispatched)
	}
	// Slots handed to dispatch whose claim may still be pending (a jitter wait, an overlap
	// queue) are left to their runs.
	inFlight := inFlightSlotsLocked(a)
	// Slots handed to dispatch whose run the gate refused were not handled, though they lie
	// within the bounds below (keepRefusedLocked).
	refused := slices.Clone(a.refused)
	e.mu.Unlock()
	// Slots up to the latest claimed one were handled; so were those handed to dispatch whose
	// claim is not written yet (a jitter wait, the claim lead): recording them missed here would
	// take their claim.
	for _, t := range bounds {
		if t.After(from) {
			from = t
		}
	}
	slots, dropped := config.SlotsBetween(sched, from, now, maxMissedRows)
	if dropped > 0 {
		oldest := sched.Next(from)
		e.record(name, slotEvent{slot: oldest, trigger: journal.TriggerCatchUp}, journal.OutcomeMissed,
			fmt.Sprintf("%d slots from %s to %s missed while not running", dropped,
				oldest.In(r.Location).Format(time.RFC3339), slots[0].In(r.Location).Format(time.RFC3339)))
	}
	slots = append(refused, slots...) // the start pass's bounds can include a refused slot
	slices.SortFunc(slots, time.Time.Compare)
	slots = slices.CompactFunc(slots, time.Time.Equal)
	slots = slices.DeleteFunc(slots, func(s time.Time) bool { return slices.ContainsFunc(inFlight, s.Equal) })
	if len(slots) == 0 {
		return true
	}
	latest := slots[len(slots)-1]
	missed := "" // why the latest is recorded missed rather than run; "" → it runs
	switch {
	case r.CatchUp != config.CatchUpOnce:
		missed = "catch_up = skip"
	case now.Sub(latest) > r.CatchUpWindow:
		missed = "outside catch_up_window"
	}
	e.mu.Lock()
	if latest.After(a.lastSlot) {
		a.lastSlot = latest
	}
	// The refused slots this pass records are handled now; a latest one that runs is taken by
	// dispatch, which would otherwise drop it as dispatched already.
	a.refused = slices.DeleteFunc(a.refused, func(s time.Time) bool {
		return slices.ContainsFunc(slots, s.Equal) && (missed != "" || !s.Equal(latest))
	})
	e.mu.Unlock()
	for _, s := range slots[:len(slots)-1] {
		e.record(name, slotEvent{slot: s, trigger: journal.TriggerCatchUp}, journal.OutcomeMissed, e.supersededReason(r))
	}
	if missed != "" {
		e.record(name, slotEvent{slot: latest, trigger: journal.TriggerCatchUp}, journal.OutcomeMissed, missed)
	} else {
		e.dispatch(name, slotEvent{slot: latest, trigger: journal.TriggerCatchUp})
	}
	return true
}

// inFlightSlotsLocked lists the scheduled slots of a's run in flight, of those held while its
// claim waits, and of the one queued behind it. The caller holds e.mu.
func inFlightSlotsLocked(a *armed) []time.Time {
	var slots []time.Time
	if a.running != nil && a.running.ev.trigger != journal.TriggerManual {
		slots = append(slots, a.running.ev.slot)
	}
	if a.running != nil {
		for _, ev := range a.running.held {
			if ev.trigger != journal.TriggerManual {
				slots = append(slots, ev.slot)
			}
		}
	}
	if a.pending != nil && a.pending.trigger != journal.TriggerManual {
		slots = append(slots, a.pending.slot)
	}
	return slots
}
