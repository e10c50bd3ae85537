package scheduler

import (
	"fmt"
	"slices"
	"time"
)

// maxMissedRows bounds how many missed slots are recorded one by one per catch-up; older ones
// are recorded as one `missed` row that names how many and since when (never silently dropped,
// and an `every = "1s"` routine after a week off does not write 600,000 rows).
const maxMissedRows = 100

// catchUpAll runs the catch-up pass for every routine (on acquiring ownership, after a wake or
// a clock jump).
func (e *Engine) catchUpAll(why string) {
	now := e.clock.Now()
	last, err := e.j.lastSlots(now)
	if err != nil {
		e.log.Error("catch-up", "err", err)
		return
	}
	for _, name := range e.names() {
		e.catchUpFrom(name, now, last[name])
	}
	e.log.Debug("catch-up pass done", "why", why)
}

// catchUp handles routine name's slots that passed without a run: those in
// (max(last claimed slot, first armed, last dispatched slot), now]. The latest runs once with trigger catch-up when
// catch_up = once and it is within catch_up_window (late-by recorded); otherwise it is recorded
// missed. Every older one is recorded missed. Issue 4: never silently dropped, never a burst.
func (e *Engine) catchUp(name string, now time.Time) {
	last, err := e.j.lastSlot(name, now)
	if err != nil {
		e.log.Error("catch-up", "routine", name, "err", err)
		return
	}
	e.catchUpFrom(name, now, last)
}

// catchUpFrom is catchUp with the routine's latest claimed slot already read.
func (e *Engine) catchUpFrom(name string, now, last time.Time) {
	if !e.gate.Admitting() {
		return
	}
	e.mu.Lock()
	a := e.routines[name]
	if a == nil || e.stopping {
		e.mu.Unlock()
		return
	}
	r, sched, from := a.r, a.sched, a.firstArmed
	dispatched := a.dispatched
	// Slots handed to dispatch whose claim may still be pending (a jitter wait, an overlap
	// queue): they are this engine's to run, whatever the bounds below say.
	var inFlight []time.Time
	for _, ev := range []*slotEvent{runningEvent(a), a.pending} {
		if ev != nil && ev.trigger != TriggerManual {
			inFlight = append(inFlight, ev.slot)
		}
	}
	e.mu.Unlock()
	// Slots up to the latest claimed one were handled; so were those handed to dispatch whose
	// claim is not written yet (a jitter wait, the claim lead): recording them missed here would
	// take their claim. A claim or dispatch of a slot still ahead of now (timers fire and claim
	// claimLead early) says nothing of the slots before it: bounding by it lost a slot missed
	// just before a new owner's first timer (found by the chaos test: the next slot's timer
	// fired between arming and this pass, and the slot before it was never run nor recorded).
	for _, t := range []time.Time{last, dispatched} {
		if t.After(from) && !t.After(now) {
			from = t
		}
	}
	slots, dropped := slotsBetween(sched, from, now, maxMissedRows)
	slots = slices.DeleteFunc(slots, func(s time.Time) bool { return slices.ContainsFunc(inFlight, s.Equal) })
	if len(slots) == 0 {
		return
	}
	if dropped > 0 {
		oldest := sched.next(from)
		e.record(name, slotEvent{slot: oldest, trigger: TriggerCatchUp}, OutcomeMissed,
			fmt.Sprintf("%d slots from %s to %s missed while not running", dropped,
				oldest.In(r.Location).Format(time.RFC3339), slots[0].In(r.Location).Format(time.RFC3339)))
	}
	latest := slots[len(slots)-1]
	e.mu.Lock()
	if latest.After(a.lastSlot) {
		a.lastSlot = latest
	}
	e.mu.Unlock()
	for _, s := range slots[:len(slots)-1] {
		e.record(name, slotEvent{slot: s, trigger: TriggerCatchUp}, OutcomeMissed, "superseded by a later slot")
	}
	switch {
	case latest.Before(dispatched):
		// A later slot is already dispatched (a new owner's first timer can fire before this
		// pass): only the latest slot runs, and dispatch would drop this one unrecorded.
		e.record(name, slotEvent{slot: latest, trigger: TriggerCatchUp}, OutcomeMissed, "superseded by a later slot")
	case r.CatchUp != CatchUpOnce:
		e.record(name, slotEvent{slot: latest, trigger: TriggerCatchUp}, OutcomeMissed, "catch_up = skip")
	case now.Sub(latest) > r.CatchUpWindow:
		e.record(name, slotEvent{slot: latest, trigger: TriggerCatchUp}, OutcomeMissed, "outside catch_up_window")
	default:
		e.dispatch(name, slotEvent{slot: latest, trigger: TriggerCatchUp})
	}
}

// runningEvent is the slot event of a's run in flight, nil when none. The caller holds e.mu.
func runningEvent(a *armed) *slotEvent {
	if a.running == nil {
		return nil
	}
	return &a.running.ev
}
