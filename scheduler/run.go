package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"

	"github.com/jonboulle/clockwork"

	"github.com/routinely/routinely/internal/runclock"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/action"
)

// lateBy is how long after its slot a run started (0 for run-now requests and early starts).
func lateBy(start time.Time, ev slotEvent) time.Duration {
	if ev.trigger == journal.TriggerManual || start.Before(ev.slot) {
		return 0
	}
	return start.Sub(ev.slot)
}

// execute runs one dispatched slot (run.ev): the jitter wait, admission by the ownership
// handle, the claim (durable before anything else happens), the action at its start instant
// with the routine's timeout, and the record of its result. It never panics. refused reports
// that the handle did not admit the run (the owner is yielding): nothing was written for the slot.
func (e *Engine) execute(ctx context.Context, r *config.Routine, run *inflight) (refused bool) {
	ev := run.ev
	// at is when the action is due to start: the slot (a timer fires claimLead early), or now
	// for a late slot and a run-now request, plus the jitter.
	at := e.clock.Now()
	if ev.trigger != journal.TriggerManual && ev.slot.After(at) {
		at = ev.slot
	}
	if r.Jitter > 0 && ev.trigger != journal.TriggerManual {
		at = at.Add(e.jitter(r.Jitter))
		if !e.waitUntil(at.Add(-claimLead), ctx.Done()) {
			e.notStarted(r.Name, ev, context.Cause(ctx), false)
			return
		}
	}
	if ev.trigger == journal.TriggerCatchUp {
		// At most max_parallel_catch_up catch-ups at once, in slot order: after a wake every
		// routine wants its catch-up at the same instant. Scheduled runs do not wait here.
		// Slots of the routine due while it waits are held (startLocked marked it claiming), as
		// while a claim is written: a later slot recorded skipped (overlap) would hide this
		// unclaimed one from the next owner's catch-up should this owner die before the claim.
		release, ok := e.catchUps.acquire(ctx.Done(), r.Name, ev.slot)
		if !ok {
			e.notStarted(r.Name, ev, context.Cause(ctx), false)
			return
		}
		defer release()
	}
	done, err := e.gate.BeginRun(r.Name, ev.slot)
	if err != nil {
		// Not claimed: the next owner's catch-up pass handles the slot, or this owner's if it
		// resumes (keepRefusedLocked).
		e.log.Info("run not admitted", "routine", r.Name, "slot", ev.slot, "err", err)
		return true
	}
	defer done()
	defer e.noteTick()
	if e.isAbandoned() {
		return false // the process exits now (EndRunsNow): the next owner's catch-up has the slot
	}
	// The hub decides first which device runs a shared slot; the local claim below then decides
	// which process of this device does, and is the last step before any side effect
	// (docs/design.md#92-the-claim).
	var hc HubClaim
	if e.shared(r, ev) {
		var next hubNext
		hc, next = e.hubClaim(ctx, r, ev)
		if next != hubRun {
			// No local claim follows: the slots held meanwhile are kept as refused once execute
			// returns (startLocked's keepHeldLocked).
			return next == hubRefused
		}
	}
	release := func(outcome string) {
		if hc.Verdict == HubWon {
			e.coord.Release(hc, outcome)
		}
	}
	// The claim says when the slot was claimed (the owner held it then, even if it dies before
	// the start); Finish records when the action really started.
	claimed := e.clock.Now()
	c := journal.Claim{Routine: r.Name, Slot: ev.slot, Key: ev.key, Trigger: ev.trigger,
		Outcome: journal.OutcomeRunning, Started: claimed, LateBy: lateBy(claimed, ev), Device: e.device()}
	e.setClaiming(run)
	// Real time while this process ran: SQLite's busy wait does not follow the engine clock, and
	// a stop (SIGSTOP) in the middle of the write says nothing about the journal.
	wait := runclock.Start()
	e.recordOlderFirst()
	id, err := e.j.Claim(c)
	e.claimSettled(r.Name, run, claimed, wait.End(), err)
	if ev.requestID != 0 && err == nil {
		_ = e.j.AnswerRequest(ev.requestID, id, "")
	}
	if err != nil {
		release("")
	}
	switch {
	case errors.Is(err, journal.ErrSlotClaimed):
		e.duplicates.Add(1)
		return
	case refusedByJournal(err):
		// No claim, so no run: the slot is recorded missed once the journal accepts writes (a
		// run-now request is served again then).
		e.log.Warn("claim slot: journal unavailable; the slot does not run and is recorded missed once the journal accepts writes",
			"routine", r.Name, "slot", ev.slot, "err", err)
		e.claimRefused(c, true, ev.requestID, claimed, err)
		return
	case err != nil:
		e.log.Error("claim slot", "routine", r.Name, "slot", ev.slot, "err", err)
		return
	}
	if !e.noteClaimed(run, id) {
		return false // the process exits now (EndRunsNow); the next owner records the run
	}
	defer e.forgetClaimed(run)
	res, started := e.runAction(ctx, r, ev, run, at)
	if isCommand(r.Spec) && (res.Outcome == journal.OutcomeTimeout || res.Outcome == journal.OutcomeInterrupted) {
		res.Summary += e.endCutRun(r.Name, id, run)
	}
	if e.isAbandoned() {
		return false // its processes were ended by EndRunsNow; the next owner records it
	}
	reason := ""
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errReplaced):
		res.Outcome, reason = journal.OutcomeInterrupted, "replaced"
	case ctx.Err() != nil && !errors.Is(cause, context.DeadlineExceeded):
		res.Outcome, reason = journal.OutcomeInterrupted, "shutdown"
	}
	finished := e.clock.Now()
	err = e.finishWithRetry(r.Name, id, journal.Result{Outcome: res.Outcome, Reason: reason, Started: started, LateBy: lateBy(started, ev),
		Finished: finished, ExitCode: res.ExitCode, Attempts: res.Attempts, Summary: res.Summary, Output: res.Output})
	release(res.Outcome)
	if err != nil {
		e.log.Error("record run", "routine", r.Name, "run", id, "err", err)
		return
	}
	if started.IsZero() {
		started = claimed
	}
	e.logRun(r, ev, id, res, reason, finished.Sub(started))
	e.afterRun(r, res)
	e.j.PruneLater(r.Name, r.KeepRuns)
	return false
}

// logRun writes the one log line of a finished run: info, or a warning when it failed, timed
// out, crashed or was interrupted. duration is from the run's start to its record.
func (e *Engine) logRun(r *config.Routine, ev slotEvent, id int64, res action.Result, reason string, duration time.Duration) {
	level := slog.LevelInfo
	attrs := []any{"routine", r.Name, "slot", ev.slot.In(r.Location).Format(time.RFC3339),
		"outcome", res.Outcome, "duration", duration.Round(time.Millisecond), "run", id}
	if ev.trigger != journal.TriggerSchedule {
		attrs = append(attrs, "trigger", ev.trigger)
	}
	if isFailure(res.Outcome) || res.Outcome == journal.OutcomeInterrupted {
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

// runAction builds r's action and input, waits for the start instant at (the claim is durable
// by now; building first keeps the work after the instant short) and runs the action with the
// routine's timeout (on the engine clock), mapping a deadline to `timeout` and a panic to
// `crashed`. started is when the action started; zero, with an empty result, when ctx ended
// before at (the caller records why).
func (e *Engine) runAction(parent context.Context, r *config.Routine, ev slotEvent, run *inflight, at time.Time) (res action.Result, started time.Time) {
	defer func() {
		if v := recover(); v != nil {
			res = action.Result{Outcome: journal.OutcomeCrashed, Summary: fmt.Sprintf("panic: %v", v), Attempts: 1}
		}
	}()
	act, err := e.newAction(r)
	if err != nil {
		return action.Result{Outcome: journal.OutcomeFailed, Summary: err.Error(), Attempts: 1}, e.clock.Now()
	}
	if ev.trigger == journal.TriggerCatchUp && r.NetworkGrace > 0 && isNetwork(r.Spec) {
		// A catch-up comes right after a wake (or a start), when the network is often not back
		// yet: a watch or ping that cannot connect tries again for network_grace.
		act = action.WithNetworkGrace(act, r.NetworkGrace, e.clock)
	}
	in := e.actionInput(r, ev, run)
	if !e.waitUntil(at, parent.Done()) {
		return action.Result{}, time.Time{}
	}
	started = e.clock.Now()
	ctx, cancel := withClockTimeout(parent, e.clock, r.Timeout)
	defer cancel()
	res = act.Run(ctx, in)
	// A command cut off by the routine's timeout is `timeout`; watch and ping report a timed-out
	// request as `failed` with its cause themselves, so only commands are relabelled.
	if timedOut(ctx) && isCommand(r.Spec) && res.Outcome != journal.OutcomeSuccess {
		res.Outcome = journal.OutcomeTimeout
	}
	if res.Outcome == "" {
		res.Outcome = journal.OutcomeFailed
	}
	if res.Attempts == 0 {
		res.Attempts = 1
	}
	return res, started
}

// actionInput is what the action of run id gets: the routine's environment plus the ROUTINELY_*
// variables (routine, slot in RFC 3339 in the routine's zone, run id, epoch, trigger)
// and the run's token (RunTokenVar), and an OnStart that records each process it starts.
// run is claimed (noteClaimed).
func (e *Engine) actionInput(r *config.Routine, ev slotEvent, run *inflight) action.Input {
	id := run.id
	epoch := e.gate.Epoch()
	env := make([]string, 0, len(r.Env)+6)
	for k, v := range r.Env {
		env = append(env, k+"="+v)
	}
	env = append(env,
		"ROUTINELY_ROUTINE="+r.Name,
		"ROUTINELY_SLOT="+ev.slot.In(r.Location).Format(time.RFC3339),
		"ROUTINELY_RUN_ID="+strconv.FormatInt(id, 10),
		"ROUTINELY_EPOCH="+strconv.FormatUint(epoch, 10),
		"ROUTINELY_TRIGGER="+ev.trigger,
		RunTokenVar+"="+run.procs.token,
	)
	if d := e.device(); d != "" {
		env = append(env, "ROUTINELY_DEVICE="+d) // with a hub: the device the run is on
	}
	return action.Input{Routine: r.Name, Slot: ev.slot, RunID: id, Epoch: epoch, Trigger: ev.trigger,
		Dir: r.Dir, Env: env, Timeout: r.Timeout, OnStart: func(pid int) { e.recordLeader(r.Name, run, pid) }}
}

// recordLeader records in the journal that run (of routine) started process pid, with its
// start time, for the next owner should this one die mid-run (orphans.go), and on run for
// EndRunsNow. A failure is logged: the next owner still finds the run's processes by their
// token. A process started after EndRunsNow looked at the runs is ended here, at once.
func (e *Engine) recordLeader(routine string, run *inflight, pid int) {
	id := run.id
	p, err := ownership.IdentifyProcess(pid)
	if err != nil {
		// Without a start time the pid is never signalled (it cannot be told from a reuse).
		e.log.Warn("cannot read the start time of a run's process", "routine", routine, "run", id, "pid", pid, "err", err)
		p = ownership.ProcessIdentity{PID: pid}
	}
	e.mu.Lock()
	run.procs.leader = p
	abandoned := e.abandoned
	e.mu.Unlock()
	if abandoned {
		leaderTarget(pid).kill()
		return
	}
	if err := e.j.RecordLeader(id, p); err != nil {
		e.log.Warn("cannot record a run's process", "routine", routine, "run", id, "pid", pid, "err", err)
	}
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

// isNetwork reports whether spec is an HTTP request (watch, ping).
func isNetwork(spec any) bool {
	switch spec.(type) {
	case action.WatchSpec, *action.WatchSpec, action.PingSpec, *action.PingSpec:
		return true
	}
	return false
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
