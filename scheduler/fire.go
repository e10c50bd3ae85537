package scheduler

import (
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// claimLead is how far ahead of its slot a routine's timer fires (cronAdapter): the run's claim
// is written and fsynced during the lead, and the action still starts at the slot's instant,
// after the claim is durable. So the fsync no longer delays the run (the lateness figure in the README)
// and nothing runs early. A claim slower than the lead only delays the start, as before.
const claimLead = 50 * time.Millisecond

// fire is gocron's task: the timer of routine name went off. It maps the clock to the slot
// that is due: the first one after the last handled (armed.lastSlot).
//
// Timers fire claimLead before their slot by design (and may fire a little earlier by the wall
// clock: NTP stepped it back, a coarse timer), so a due slot up to lateTolerance ahead is
// dispatched at its instant minus claimLead (fireEarly). A slot that has passed is dispatched
// late; when several passed (sleep, a stopped process, a loaded machine) or it is later than
// lateTolerance, the catch-up pass handles them so older slots are recorded missed and only the
// latest runs: never a burst. gocron does not arm a fire time that is already past, so after a
// late fire the slot coming up within claimLead is handled here too.
func (e *Engine) fire(name string) {
	now := e.clock.Now()
	last, sched, _, ok := e.slotState(name)
	if !ok {
		return
	}
	due := sched.Next(last)
	if due.IsZero() {
		return
	}
	if !due.After(now) {
		latest := config.PrevSlot(sched, now, 400*24*time.Hour)
		if latest.After(due) || now.Sub(latest) > e.lateTolerance {
			e.catchUp(name, now)
		} else {
			e.dispatch(name, slotEvent{slot: latest, trigger: journal.TriggerSchedule})
		}
		now = e.clock.Now()
		if due = sched.Next(now); due.IsZero() || due.Sub(now) > claimLead {
			return
		}
	}
	e.fireEarly(name, due)
}

// fireEarly dispatches slot, which lies ahead, claimLead before its instant (the run waits for
// the instant once its claim is durable). Further ahead than lateTolerance it is left to its
// own timer (this one is a duplicate after a re-arm). If a run of the routine is in flight it
// waits for the instant itself, so the overlap policy sees what an on-time timer would.
func (e *Engine) fireEarly(name string, slot time.Time) {
	if slot.Sub(e.clock.Now()) > e.lateTolerance {
		return
	}
	_, _, busy, _ := e.slotState(name)
	wake := slot.Add(-claimLead)
	if busy {
		wake = slot
	}
	if !e.waitUntil(wake, e.bgStop) {
		return // stopping
	}
	if last, _, _, ok := e.slotState(name); !ok || !slot.After(last) {
		return // dispatched meanwhile (a catch-up pass, a re-armed timer)
	}
	e.dispatch(name, slotEvent{slot: slot, trigger: journal.TriggerSchedule})
}

// slotState reads what fire needs of routine name: the latest slot handled (or the arm time),
// the schedule, and whether a run is in flight or waiting. ok is false for an unknown routine.
func (e *Engine) slotState(name string) (last time.Time, sched config.Schedule, busy, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.routines[name]
	if a == nil {
		return time.Time{}, nil, false, false
	}
	return a.lastSlot, a.sched, a.running != nil || a.pending != nil, true
}

// waitUntil waits on the engine clock until t; false when stop is closed first (then or
// already). The timer is stopped on return, so a fake clock keeps no stray waiter.
func (e *Engine) waitUntil(t time.Time, stop <-chan struct{}) bool {
	d := t.Sub(e.clock.Now())
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	timer := e.clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.Chan():
		return true
	case <-stop:
		return false
	}
}
