package scheduler

// Dispatch: a due slot meets the pause, duplicate and overlap checks and starts its run.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// inflight is a run in progress. Its fields are guarded by the engine's mu.
type inflight struct {
	a      *armed // the routine it belongs to
	ev     slotEvent
	cancel context.CancelCauseFunc
	// claiming is set while the run waits for its claim (the journal's write). Slots of the
	// routine due meanwhile are held rather than meeting the overlap policy: no run has started,
	// and none will if the journal refuses the claim (claimSettled decides them).
	claiming bool
	held     []slotEvent
	id       int64 // the run's id once claimed (0 before)
	// procs finds the run's processes once it is claimed (its token) and has started one (its
	// leader): what endCutRun and EndRunsNow end.
	procs runProcs
}

// dispatch handles one slot of routine name: a slot handed to dispatch before → dropped (counted
// in Duplicates); the gate not admitting (the owner is yielding) → kept like a run the gate
// refuses (keepRefusedLocked); paused → recorded skipped (paused); another run in flight → the
// overlap policy; otherwise the run starts in its own goroutine. Run-now requests (trigger
// manual) are their own slots and skip the duplicate and pause checks.
func (e *Engine) dispatch(name string, ev slotEvent) {
	admitting := e.gate.Admitting()
	now := e.clock.Now()
	e.mu.Lock()
	p := e.pauseOfLocked(name, now)
	a := e.routines[name]
	if a == nil || e.stopping {
		e.mu.Unlock()
		return
	}
	if ev.trigger != journal.TriggerManual {
		switch {
		case ev.slot.After(a.dispatched):
			a.dispatched = ev.slot
			if ev.slot.After(a.lastSlot) {
				a.lastSlot = ev.slot
			}
		case ev.slot.Equal(a.dispatched) && takeSlot(&a.refused, ev.slot):
			// The latest dispatched slot, whose run the gate refused (the owner yielded, then
			// resumed): it was never handled, so a catch-up pass dispatches it again.
		default:
			// The same slot can arrive twice (a catch-up pass after a wake and a timer firing
			// late, a re-armed timer): the first one handles it. The second must not meet the
			// overlap policy: recorded `skipped (overlap)` it could win the claim, and under
			// replace it would cancel the slot's own run.
			//
			// A catch-up slot older than the one dispatched was not run here: timers dispatch in
			// order, after the slots a catch-up pass sees, but a new owner's first timer can fire
			// claimLead early, before or during the start's pass, and a slot the gate refused
			// stays behind the ones dispatched after the owner resumed. Only the latest slot
			// runs, so it is superseded, and recorded rather than dropped.
			superseded := ev.trigger == journal.TriggerCatchUp && ev.slot.Before(a.dispatched) && !slices.ContainsFunc(inFlightSlotsLocked(a), ev.slot.Equal)
			if superseded {
				takeSlot(&a.refused, ev.slot)
			}
			e.mu.Unlock()
			if superseded {
				e.record(name, ev, journal.OutcomeMissed, "superseded by a later slot")
				return
			}
			e.duplicates.Add(1)
			return
		}
	}
	if !admitting {
		// A timer that passed the gate just before the owner yielded, or a catch-up pass the
		// yield cut short: dropped here, the slot would count as handled by nobody.
		e.keepRefusedLocked(a, ev)
		e.mu.Unlock()
		return
	}
	if (p.Paused || a.r.Paused) && ev.trigger != journal.TriggerManual { // a person asking to run now wins
		e.mu.Unlock()
		e.record(name, ev, journal.OutcomeSkipped, "paused")
		return
	}
	if a.running != nil {
		if a.running.claiming {
			a.running.held = append(a.running.held, ev)
			e.mu.Unlock()
			return
		}
		skip := e.overlapLocked(a, ev)
		e.mu.Unlock()
		if skip != nil {
			e.record(name, *skip, journal.OutcomeSkipped, "overlap")
		}
		return
	}
	e.startLocked(a, ev)
	e.mu.Unlock()
}

// overlapLocked applies a's overlap policy to ev, due while a's run is in flight: queue → ev
// waits (one at most); replace → ev waits and the run is cancelled; skip, or a queue already
// full → ev is skipped. It returns the slot to record `skipped (overlap)`, if any, for the caller
// to record once it has unlocked e.mu, which it holds.
func (e *Engine) overlapLocked(a *armed, ev slotEvent) (skip *slotEvent) {
	switch a.r.Overlap {
	case config.OverlapQueue:
		if a.pending == nil {
			a.pending = &ev
			return nil
		}
	case config.OverlapReplace:
		dropped := a.pending
		a.pending = &ev
		a.running.cancel(errReplaced)
		return dropped
	}
	return &ev
}

// startLocked marks a running and starts the run goroutine. The caller holds e.mu; the run
// gets the routine as it is now (a config reload may replace a.r while the run is in flight).
// When the run ends, the slot waiting behind it (overlap queue or replace) starts, or, if the
// engine is stopping or the routine was removed, is recorded (never silently dropped).
func (e *Engine) startLocked(a *armed, ev slotEvent) {
	r := a.r
	ctx, cancel := context.WithCancelCause(e.runCtx)
	// A catch-up is claiming from here, not from when its goroutine gets to run: it may wait
	// for the catch-up limiter before its claim, and a slot due before the goroutine marked
	// it would meet the overlap policy (seen under Wine, whose threads start late).
	run := &inflight{a: a, ev: ev, cancel: cancel, claiming: ev.trigger == journal.TriggerCatchUp}
	a.running = run
	e.runs.Add(1)
	go func() {
		defer e.runs.Done()
		defer e.changed() // the run has ended (or never started): its routine is idle again
		e.changed()       // it is running
		refused := e.execute(ctx, r, run)
		cancel(nil)
		e.mu.Lock()
		e.keepHeldLocked(run)
		a.running = nil
		next := a.pending
		a.pending = nil
		stopping, removed := e.stopping, e.routines[r.Name] != a
		if refused && !removed {
			e.keepRefusedLocked(a, ev)
		}
		if next != nil && !stopping && !removed {
			e.startLocked(a, *next)
			next = nil
		}
		e.mu.Unlock()
		if refused && removed {
			e.notStarted(r.Name, ev, nil, true)
		}
		if next != nil {
			e.notStarted(r.Name, *next, nil, removed)
		}
	}()
}

// keepRefusedLocked keeps a dispatched slot the gate refused (at dispatch, or at the run's
// admission: the owner is yielding to a takeover), so that whichever owner runs next handles it:
// a new owner's catch-up finds it unclaimed in the journal; this owner, if the request is
// withdrawn and it resumes, finds it in a.refused (catchUpRefused). Recording it missed here
// would also account for it, but against the policy: it would take the slot from the new
// owner's catch-up, which runs it under catch_up = "once". A run-now request stays pending in
// the journal (taken, never claimed); forgetting that this engine took it lets it serve the
// request again on resume. The caller holds e.mu.
func (e *Engine) keepRefusedLocked(a *armed, ev slotEvent) {
	if ev.trigger == journal.TriggerManual {
		e.serveAgainLocked(ev.requestID)
		return
	}
	if !slices.ContainsFunc(a.refused, ev.slot.Equal) {
		a.refused = append(a.refused, ev.slot)
	}
	e.wakePoller() // it retries refused slots every pollEvery while there are any
}

// takeSlot removes slot from *slots and reports whether it was there.
func takeSlot(slots *[]time.Time, slot time.Time) bool {
	i := slices.IndexFunc(*slots, slot.Equal)
	if i < 0 {
		return false
	}
	*slots = slices.Delete(*slots, i, i+1)
	return true
}

// notStarted records a dispatched slot whose run never started: cancelled while waiting for its
// jitter (cause errReplaced: a newer slot replaced it), or the engine stopped or the routine was
// removed before it could start. A run-now request left by a stopping engine stays pending:
// the next owner serves requests nobody claimed.
func (e *Engine) notStarted(name string, ev slotEvent, cause error, removed bool) {
	switch {
	case errors.Is(cause, errReplaced):
		e.record(name, ev, journal.OutcomeSkipped, "replaced")
	case removed && ev.requestID != 0:
		_ = e.j.AnswerRequest(ev.requestID, 0, fmt.Sprintf("routine %q was removed from the owner's configuration", name))
	case removed:
		e.record(name, ev, journal.OutcomeMissed, "routine removed before the run started")
	case ev.requestID == 0:
		e.record(name, ev, journal.OutcomeMissed, "owner stopped before the run started")
	}
}

// record claims a slot that will not run (skipped or missed) so it is never run later. When the
// journal refuses the write, the slot is kept and recorded once it accepts writes again.
func (e *Engine) record(name string, ev slotEvent, outcome, reason string) {
	now := e.clock.Now()
	device := ev.device
	if device == "" {
		device = e.device()
	}
	c := journal.Claim{Routine: name, Slot: ev.slot, Key: ev.key, Trigger: ev.trigger,
		Outcome: outcome, Reason: reason, Started: now, LateBy: lateBy(now, ev), Device: device}
	e.recordOlderFirst()
	id, err := e.j.Claim(c)
	switch {
	case errors.Is(err, journal.ErrSlotClaimed):
		e.duplicates.Add(1)
	case refusedByJournal(err):
		e.log.Warn("record slot: journal unavailable; recording it once the journal accepts writes",
			"routine", name, "slot", ev.slot, "outcome", outcome, "err", err)
		e.claimRefused(c, false, ev.requestID, now, err)
	case err != nil:
		e.log.Error("record slot", "routine", name, "slot", ev.slot, "outcome", outcome, "err", err)
	default:
		e.log.Debug("slot recorded", "routine", name, "slot", ev.slot, "outcome", outcome, "reason", reason)
	}
	if ev.requestID != 0 && err == nil {
		_ = e.j.AnswerRequest(ev.requestID, id, "")
	}
	e.noteTick()
	e.changed()
}
