package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jonboulle/clockwork"

	"github.com/routinely/routinely/scheduler/action"
)

// inflight is a run in progress.
type inflight struct {
	ev     slotEvent
	cancel context.CancelCauseFunc
}

// claimLead is how far ahead of its slot a routine's timer fires (cronAdapter): the run's claim
// is written and fsynced during the lead, and the action still starts at the slot's instant,
// after the claim is durable. So the fsync no longer delays the run (issue 4's lateness goal)
// and nothing runs early. A claim slower than the lead only delays the start, as before.
const claimLead = 50 * time.Millisecond

// fire is gocron's task: the timer of routine name went off. It maps the clock to the slot
// that is due: the first one after the last handed to dispatch.
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
	due := sched.next(last)
	if due.IsZero() {
		return
	}
	if !due.After(now) {
		latest := prevSlot(sched, now, 400*24*time.Hour)
		if latest.After(due) || now.Sub(latest) > e.lateTolerance {
			e.catchUp(name, now)
		} else {
			e.dispatch(name, slotEvent{slot: latest, trigger: TriggerSchedule})
		}
		now = e.clock.Now()
		if due = sched.next(now); due.IsZero() || due.Sub(now) > claimLead {
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
	if !e.sleepUntil(wake) {
		return // stopping
	}
	if last, _, _, ok := e.slotState(name); !ok || !slot.After(last) {
		return // dispatched meanwhile (a catch-up pass, a re-armed timer)
	}
	e.dispatch(name, slotEvent{slot: slot, trigger: TriggerSchedule})
}

// slotState reads what fire needs of routine name: the latest slot handed to dispatch, the
// schedule, and whether a run is in flight or waiting. ok is false for an unknown routine.
func (e *Engine) slotState(name string) (last time.Time, sched schedule, busy, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.routines[name]
	if a == nil {
		return time.Time{}, nil, false, false
	}
	return a.lastSlot, a.sched, a.running != nil || a.pending != nil, true
}

// sleepUntil waits on the engine clock until t; false when the engine stops first.
func (e *Engine) sleepUntil(t time.Time) bool {
	d := t.Sub(e.clock.Now())
	if d <= 0 {
		return true
	}
	timer := e.clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.Chan():
		return true
	case <-e.bgStop:
		return false
	}
}

// waitUntil waits on the engine clock until t; false when ctx ends first (the timer is
// stopped, so a fake clock keeps no stray waiter).
func (e *Engine) waitUntil(ctx context.Context, t time.Time) bool {
	d := t.Sub(e.clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := e.clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.Chan():
		return true
	case <-ctx.Done():
		return false
	}
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

// startLocked marks a running and starts the run goroutine. The caller holds e.mu; the run
// gets the routine as it is now (a config reload may replace a.r while the run is in flight).
// When the run ends, the slot waiting behind it (overlap queue or replace) starts, or, if the
// engine is stopping or the routine was removed, is recorded (never silently dropped).
func (e *Engine) startLocked(a *armed, ev slotEvent) {
	r := a.r
	ctx, cancel := context.WithCancelCause(e.runCtx)
	a.running = &inflight{ev: ev, cancel: cancel}
	e.runs.Add(1)
	go func() {
		defer e.runs.Done()
		e.execute(ctx, r, ev)
		cancel(nil)
		e.mu.Lock()
		a.running = nil
		next := a.pending
		a.pending = nil
		stopping, removed := e.stopping, e.routines[r.Name] != a
		if next != nil && !stopping && !removed {
			e.startLocked(a, *next)
			next = nil
		}
		e.mu.Unlock()
		if next != nil {
			e.notStarted(r.Name, *next, nil, removed)
		}
	}()
}

// notStarted records a dispatched slot whose run never started: cancelled while waiting for its
// jitter (cause errReplaced: a newer slot replaced it), or the engine stopped or the routine was
// removed before it could start. A run-now request left by a stopping engine stays pending:
// the next owner serves requests nobody claimed.
func (e *Engine) notStarted(name string, ev slotEvent, cause error, removed bool) {
	switch {
	case errors.Is(cause, errReplaced):
		e.record(name, ev, OutcomeSkipped, "replaced")
	case removed && ev.requestID != 0:
		_ = e.j.answerRequest(ev.requestID, 0, fmt.Sprintf("routine %q was removed from the owner's configuration", name))
	case removed:
		e.record(name, ev, OutcomeMissed, "routine removed before the run started")
	case ev.requestID == 0:
		e.record(name, ev, OutcomeMissed, "owner stopped before the run started")
	}
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
	default:
		e.log.Debug("slot recorded", "routine", name, "slot", ev.slot, "outcome", outcome, "reason", reason)
	}
	if ev.requestID != 0 && err == nil {
		_ = e.j.answerRequest(ev.requestID, id, "")
	}
	e.noteTick()
}

// lateBy is how long after its slot a run started (0 for run-now requests and early starts).
func lateBy(start time.Time, ev slotEvent) time.Duration {
	if ev.trigger == TriggerManual || start.Before(ev.slot) {
		return 0
	}
	return start.Sub(ev.slot)
}

// execute runs one dispatched slot: the jitter wait, admission by the ownership handle, the
// claim (durable before anything else happens), the action at its start instant with the
// routine's timeout, and the record of its result. It never panics.
func (e *Engine) execute(ctx context.Context, r *Routine, ev slotEvent) {
	// at is when the action starts: the slot (a timer fires claimLead early), or now for a late
	// slot and a run-now request, plus the jitter.
	at := e.clock.Now()
	if ev.trigger != TriggerManual && ev.slot.After(at) {
		at = ev.slot
	}
	if r.Jitter > 0 && ev.trigger != TriggerManual {
		at = at.Add(rand.N(r.Jitter))
		if !e.waitUntil(ctx, at.Add(-claimLead)) {
			e.notStarted(r.Name, ev, context.Cause(ctx), false)
			return
		}
	}
	done, err := e.gate.BeginRun(r.Name, ev.slot)
	if err != nil {
		// Not claimed: the next owner's catch-up pass handles the slot.
		e.log.Info("run not admitted", "routine", r.Name, "slot", ev.slot, "err", err)
		return
	}
	defer done()
	defer e.noteTick()
	if now := e.clock.Now(); now.After(at) {
		at = now // the jitter wait overslept; the start is now
	}
	id, err := e.j.Claim(claim{Routine: r.Name, Slot: ev.slot, Key: ev.key, Trigger: ev.trigger,
		Outcome: OutcomeRunning, Started: at, LateBy: lateBy(at, ev)})
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
	if d := e.clock.Now().Sub(at); d > 0 && ev.trigger == TriggerSchedule {
		println("DBGclaimlate", d.String())
	}
	var res action.Result
	if e.waitUntil(ctx, at) { // the claim is durable: the side effects may start
		res = e.runAction(ctx, r, ev, id)
	}
	reason := ""
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errReplaced):
		res.Outcome, reason = OutcomeInterrupted, "replaced"
	case ctx.Err() != nil && !errors.Is(cause, context.DeadlineExceeded):
		res.Outcome, reason = OutcomeInterrupted, "shutdown"
	}
	finished := e.clock.Now()
	if err := e.j.Finish(id, finish{Outcome: res.Outcome, Reason: reason, Finished: finished,
		ExitCode: res.ExitCode, Attempts: res.Attempts, Summary: res.Summary, Output: res.Output}); err != nil {
		e.log.Error("record run", "routine", r.Name, "run", id, "err", err)
		return
	}
	e.logRun(r, ev, id, res, reason, finished.Sub(at))
	e.afterRun(r, res)
	e.j.pruneLater(r.Name, r.KeepRuns)
}

// logRun writes the one log line of a finished run: info, or a warning when it failed, timed
// out, crashed or was interrupted. duration is from the run's start to its record.
func (e *Engine) logRun(r *Routine, ev slotEvent, id int64, res action.Result, reason string, duration time.Duration) {
	level := slog.LevelInfo
	attrs := []any{"routine", r.Name, "slot", ev.slot.In(r.Location).Format(time.RFC3339),
		"outcome", res.Outcome, "duration", duration.Round(time.Millisecond), "run", id}
	if ev.trigger != TriggerSchedule {
		attrs = append(attrs, "trigger", ev.trigger)
	}
	if isFailure(res.Outcome) || res.Outcome == OutcomeInterrupted {
		level = slog.LevelWarn
		if reason != "" {
			attrs = append(attrs, "reason", reason)
		}
		if res.Summary != "" {
			attrs = append(attrs, "summary", truncate(res.Summary, 200))
		}
	}
	e.log.Log(context.Background(), level, "run finished", attrs...)
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
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
