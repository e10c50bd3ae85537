package scheduler

// The owner's pollers of what other processes leave in the journal: run-now requests and pauses.

import (
	"fmt"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// pollRequests picks up run-now requests from the journal every pollEvery (< 1 s) and
// runs each through the same claim, overlap, timeout and history path as a scheduled slot.
func (e *Engine) pollRequests(stop <-chan struct{}) {
	t := time.NewTicker(e.pollEvery)
	defer t.Stop()
	for {
		e.refreshPauses()
		e.runStartPass()
		e.catchUpRefused()
		e.serveRequests()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// serveAgainLocked forgets that this engine took the run-now requests ids, so the next poll
// serves them again: their run was never claimed (the gate refused it while the owner yielded,
// or the journal refused the claim), and the request stays pending in the journal. The caller
// holds e.mu.
func (e *Engine) serveAgainLocked(ids ...int64) {
	for _, id := range ids {
		delete(e.taken, id)
	}
}

// serveRequests dispatches every pending request once.
func (e *Engine) serveRequests() {
	if !e.gate.Admitting() {
		return
	}
	reqs, err := e.j.PendingRequests()
	if err != nil {
		e.log.Warn("run-now requests", "err", err)
		return
	}
	for _, rq := range reqs {
		e.mu.Lock()
		_, known := e.routines[rq.Routine]
		taken := e.taken[rq.ID]
		e.mu.Unlock()
		if taken {
			continue
		}
		if !known {
			_ = e.j.AnswerRequest(rq.ID, 0, fmt.Sprintf("no routine %q in the owner's configuration", rq.Routine))
			continue
		}
		// Mark it taken before dispatching so the next poll does not pick it again; the run's
		// claim (or its skip record) replaces the placeholder with the run id.
		if err := e.j.AnswerRequest(rq.ID, -1, ""); err != nil {
			e.log.Warn("take run-now request", "err", err)
			continue
		}
		e.mu.Lock()
		e.taken[rq.ID] = true
		e.mu.Unlock()
		e.dispatch(rq.Routine, slotEvent{slot: e.clock.Now().Truncate(time.Second), trigger: journal.TriggerManual,
			key: fmt.Sprintf("manual:%d", rq.ID), requestID: rq.ID})
	}
}

// refreshPauses re-reads the pauses from the journal (any process may pause or resume), so the
// run path checks a pause in memory instead of querying SQLite for every slot.
func (e *Engine) refreshPauses() {
	p, err := e.j.Pauses(e.clock.Now())
	if err != nil {
		e.log.Warn("read pauses", "err", err)
		return
	}
	e.mu.Lock()
	e.pauses = p
	e.mu.Unlock()
}

// pauseOfLocked returns routine's effective pause at now from the cache: its own, else the
// global one; a pause whose end has passed no longer counts.
func (e *Engine) pauseOfLocked(routine string, now time.Time) journal.Pause {
	p, ok := e.pauses[routine]
	if !ok {
		p = e.pauses[""]
	}
	if p.Until != nil && !now.Before(*p.Until) {
		return journal.Pause{}
	}
	return p
}
