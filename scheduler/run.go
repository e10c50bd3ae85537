package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/routinely/routinely/scheduler/action"
)

// inflight is a run in progress.
type inflight struct {
	ev     slotEvent
	cancel context.CancelCauseFunc
}

// fire is gocron's task: the timer of routine name went off. It maps the clock to the slot
// that is due. When slots passed since the last one handled (sleep, a stopped process, a
// loaded machine), or this one is later than lateTolerance, the catch-up pass handles them so
// older slots are recorded missed and only the latest runs: never a burst.
func (e *Engine) fire(name string) {
	now := e.clock.Now()
	e.mu.Lock()
	a := e.routines[name]
	var last time.Time
	var sched schedule
	if a != nil {
		last, sched = a.lastSlot, a.sched
	}
	e.mu.Unlock()
	if a == nil {
		return
	}
	slot := prevSlot(sched, now, 400*24*time.Hour)
	if slot.IsZero() || !slot.After(last) {
		return // handled already (a duplicate timer after a re-arm)
	}
	if now.Sub(slot) > e.lateTolerance || (!last.IsZero() && sched.next(last).Before(slot)) {
		e.catchUp(name, now)
		return
	}
	e.dispatch(name, slotEvent{slot: slot, trigger: TriggerSchedule})
}

// dispatch handles one slot of routine name: paused → recorded skipped (paused); another run in
// flight → the overlap policy; otherwise the run starts in its own goroutine.
func (e *Engine) dispatch(name string, ev slotEvent) {
	if !e.gate.Admitting() {
		return
	}
	now := e.clock.Now()
	e.mu.Lock()
	p := e.pauseOfLocked(name, now)
	a := e.routines[name]
	if a == nil || e.stopping {
		e.mu.Unlock()
		return
	}
	if ev.trigger != TriggerManual && ev.slot.After(a.lastSlot) {
		a.lastSlot = ev.slot
	}
	if (p.Paused || a.r.Paused) && ev.trigger != TriggerManual { // a person asking to run now wins
		e.mu.Unlock()
		e.record(name, ev, OutcomeSkipped, "paused")
		return
	}
	if a.running != nil {
		switch a.r.Overlap {
		case OverlapQueue:
			if a.pending == nil {
				a.pending = &ev
				e.mu.Unlock()
				return
			}
		case OverlapReplace:
			dropped := a.pending
			a.pending = &ev
			a.running.cancel(errReplaced)
			e.mu.Unlock()
			if dropped != nil {
				e.record(name, *dropped, OutcomeSkipped, "overlap")
			}
			return
		}
		e.mu.Unlock()
		e.record(name, ev, OutcomeSkipped, "overlap")
		return
	}
	e.startLocked(a, ev)
	e.mu.Unlock()
}

// startLocked marks a running and starts the run goroutine.
func (e *Engine) startLocked(a *armed, ev slotEvent) {
	ctx, cancel := context.WithCancelCause(e.runCtx)
	a.running = &inflight{ev: ev, cancel: cancel}
	e.runs.Add(1)
	go func() {
		defer e.runs.Done()
		e.execute(ctx, a.r, ev)
		cancel(nil)
		e.mu.Lock()
		a.running = nil
		next := a.pending
		a.pending = nil
		if next != nil && !e.stopping && e.routines[a.r.Name] == a {
			e.startLocked(a, *next)
		}
		e.mu.Unlock()
	}()
}

// record claims a slot that will not run (skipped or missed) so it is never run later.
func (e *Engine) record(name string, ev slotEvent, outcome, reason string) {
	now := e.clock.Now()
	id, err := e.j.Claim(claim{Routine: name, Slot: ev.slot, Key: ev.key, Trigger: ev.trigger,
		Outcome: outcome, Reason: reason, Started: now, LateBy: lateBy(now, ev)})
	switch {
	case errors.Is(err, ErrSlotClaimed):
		e.duplicates.Add(1)
	case err != nil:
		e.log.Error("record slot", "routine", name, "slot", ev.slot, "outcome", outcome, "err", err)
	}
	if ev.requestID != 0 && err == nil {
		_ = e.j.answerRequest(ev.requestID, id, "")
	}
	e.noteTick()
}

func lateBy(now time.Time, ev slotEvent) time.Duration {
	if ev.trigger == TriggerManual || now.Before(ev.slot) {
		return 0
	}
	return now.Sub(ev.slot)
}

// execute runs one claimed slot: admission by the ownership handle, the claim, the action with
// the routine's timeout, and the record of its result. It never panics.
func (e *Engine) execute(ctx context.Context, r *Routine, ev slotEvent) {
	if r.Jitter > 0 && ev.trigger != TriggerManual {
		select {
		case <-e.clock.After(rand.N(r.Jitter)):
		case <-ctx.Done():
			return
		}
	}
	done, err := e.gate.BeginRun(r.Name, ev.slot)
	if err != nil {
		e.log.Info("run not admitted", "routine", r.Name, "slot", ev.slot, "err", err)
		return
	}
	defer done()
	defer e.noteTick()
	start := e.clock.Now()
	id, err := e.j.Claim(claim{Routine: r.Name, Slot: ev.slot, Key: ev.key, Trigger: ev.trigger,
		Outcome: OutcomeRunning, Started: start, LateBy: lateBy(start, ev)})
	if ev.requestID != 0 && !errors.Is(err, ErrSlotClaimed) {
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		_ = e.j.answerRequest(ev.requestID, id, msg)
	}
	if errors.Is(err, ErrSlotClaimed) {
		e.duplicates.Add(1)
		return
	}
	if err != nil {
		e.log.Error("claim slot", "routine", r.Name, "slot", ev.slot, "err", err)
		return
	}
	res := e.runAction(ctx, r, ev, id)
	reason := ""
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errReplaced):
		res.Outcome, reason = OutcomeInterrupted, "replaced"
	case ctx.Err() != nil && !errors.Is(cause, context.DeadlineExceeded):
		res.Outcome, reason = OutcomeInterrupted, "shutdown"
	}
	if err := e.j.Finish(id, finish{Outcome: res.Outcome, Reason: reason, Finished: e.clock.Now(),
		ExitCode: res.ExitCode, Attempts: res.Attempts, Summary: res.Summary, Output: res.Output}); err != nil {
		e.log.Error("record run", "routine", r.Name, "run", id, "err", err)
		return
	}
	e.afterRun(r, res)
	e.j.pruneLater(r.Name, r.KeepRuns)
}

// runAction builds and runs r's action with the routine's timeout (on the engine clock),
// mapping a deadline to `timeout` and a panic to `crashed`.
func (e *Engine) runAction(parent context.Context, r *Routine, ev slotEvent, id int64) (res action.Result) {
	ctx, cancel := withClockTimeout(parent, e.clock, r.Timeout)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			res = action.Result{Outcome: OutcomeCrashed, Summary: fmt.Sprintf("panic: %v", v), Attempts: 1}
		}
	}()
	act, err := e.newAction(r)
	if err != nil {
		return action.Result{Outcome: OutcomeFailed, Summary: err.Error(), Attempts: 1}
	}
	epoch := e.gate.Epoch()
	env := make([]string, 0, len(r.Env)+5)
	for k, v := range r.Env {
		env = append(env, k+"="+v)
	}
	env = append(env,
		"ROUTINELY_ROUTINE="+r.Name,
		"ROUTINELY_SLOT="+ev.slot.In(r.Location).Format(time.RFC3339),
		"ROUTINELY_RUN_ID="+strconv.FormatInt(id, 10),
		"ROUTINELY_EPOCH="+strconv.FormatUint(epoch, 10),
		"ROUTINELY_TRIGGER="+ev.trigger,
	)
	res = act.Run(ctx, action.Input{Routine: r.Name, Slot: ev.slot, RunID: id, Epoch: epoch, Trigger: ev.trigger,
		Dir: r.Dir, Env: env, Timeout: r.Timeout})
	// A command cut off by the routine's timeout is `timeout`; watch and ping report a timed-out
	// request as `failed` with its cause themselves (issue 5), so only commands are relabelled.
	if timedOut(ctx) && isCommand(r.Spec) && res.Outcome != OutcomeSuccess {
		res.Outcome = OutcomeTimeout
	}
	if res.Outcome == "" {
		res.Outcome = OutcomeFailed
	}
	if res.Attempts == 0 {
		res.Attempts = 1
	}
	return res
}

// withClockTimeout is context.WithTimeout on the engine clock. (clockwork's own WithTimeout
// blocks in Err() until the deadline, so it cannot be used to test a run that ends early.)
func withClockTimeout(parent context.Context, clock clockwork.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, fake := clock.(*clockwork.FakeClock); !fake {
		return context.WithTimeoutCause(parent, d, errRunTimeout)
	}
	ctx, cancel := context.WithCancelCause(parent)
	t := clock.AfterFunc(d, func() { cancel(errRunTimeout) })
	return ctx, func() { t.Stop(); cancel(nil) }
}

// timedOut reports whether ctx ended because the routine's timeout passed.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errRunTimeout)
}

// afterRun sends the alert the policy asks for and auto-pauses a routine that kept failing.
func (e *Engine) afterRun(r *Routine, res action.Result) {
	if title, body, send := e.alerts.Observe(r.Name, res); send && e.opts.Notifier != nil {
		if err := e.opts.Notifier.Notify(title, body); err != nil {
			e.log.Warn("notify", "routine", r.Name, "err", err)
		}
	}
	n := r.AutoPauseAfter
	if n <= 0 || !isFailure(res.Outcome) {
		return
	}
	recent, err := e.j.recentOutcomes(r.Name, n)
	if err != nil || len(recent) < n {
		return
	}
	for _, o := range recent {
		if !isFailure(o) {
			return
		}
	}
	note := fmt.Sprintf("auto-paused after %d consecutive failures", n)
	if err := e.j.SetPaused(r.Name, note, nil); err != nil {
		e.log.Error("auto-pause", "routine", r.Name, "err", err)
		return
	}
	e.refreshPauses()
	e.log.Warn("routine auto-paused", "routine", r.Name, "note", note)
	if e.opts.Notifier != nil {
		_ = e.opts.Notifier.Notify("Routine paused: "+r.Name, note+"; resume it when fixed")
	}
}

func isFailure(outcome string) bool {
	return outcome == OutcomeFailed || outcome == OutcomeTimeout || outcome == OutcomeCrashed
}

// isCommand reports whether spec starts a process (run or shell) rather than an HTTP request or a
// notification.
func isCommand(spec any) bool {
	switch spec.(type) {
	case action.RunSpec, *action.RunSpec, action.ShellSpec, *action.ShellSpec:
		return true
	}
	return false
}
