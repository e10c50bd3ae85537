package scheduler

// A run never outlives its owner: when an owner dies mid-run (SIGKILL, a crash, an OOM kill),
// the processes of its runs end before the next owner starts any run. Without this, a run's
// process group (it leads its own, so that a timeout can end all of it) is out of reach of
// whatever ends the owner: it keeps running while the next owner starts the routine's next slot,
// and two instances of a routine run at once despite its overlap policy.
//
// The mechanism is the next owner's: in Engine.Start, after fencing the journal and before arming
// any routine or running catch-up, it ends the processes of every run an earlier epoch left
// `running` (an orphan), waits until they are gone, and only then records the run `interrupted`,
// saying whether its processes were still running and were ended, or had already exited. It is
// chosen because it needs nothing from the dying owner (SIGKILL leaves it no last word), works
// the same on Linux and macOS, and checks identities so that it never signals a process that
// merely got a recorded pid later. Not chosen:
//   - prctl(PR_SET_PDEATHSIG) (Linux only): it reaches the direct child only, not the processes
//     that child starts, and fires when the OS thread that started the child exits, which in Go
//     is not the owner's death (see the Pdeathsig note of syscall.SysProcAttr). It would also
//     leave a leaderless group behind, the case below that is hardest to verify.
//   - On Windows the kernel does it: each run's Job Object is kill-on-close (scheduler/action),
//     so its processes end when the dying owner's handle closes; the pass here is the backstop.
//
// The owner itself uses the same rules (endRunProcesses, one function for "end every process of
// these runs") for a run it cuts short: after a timeout, a stop that gave up waiting, or a
// replace (Engine.endCutRun), the run's process group has had SIGTERM and SIGKILL from the
// action, but a process that left that group (setsid, setpgid: a command that daemonizes) is out
// of the group's reach and only its token finds it; and before it exits without a drain (a
// second stop signal, Engine.EndRunsNow), so that an "exit now" leaves no run behind either.
//
// Which processes are a run's (runTargets):
//  1. Its process group, when the recorded leader still runs: same pid and same start time
//     (ownership.ProcessIdentity). The group id is the leader's pid, so it is the run's group.
//     A recorded pid that now belongs to a process with another start time means the pid was
//     reused, so the run's group had ended: a new process never gets the id of a live process
//     group ("The child process ID also shall not match any active process group ID", POSIX
//     fork, https://pubs.opengroup.org/onlinepubs/9699919799/functions/fork.html; Linux keeps a
//     pid allocated while any process uses it as its process group id).
//  2. Every live process whose environment carries the run's ROUTINELY_RUN_TOKEN (unique to the
//     journal and run), and its process group. This covers an owner that died after starting a
//     process but before recording it, and a leader that exited (SIGPIPE once the dead owner's
//     end of the output pipe closed) while members of its group live on: such a group's id is
//     still reserved, but it cannot be told from a group that took the number after the run's
//     group ended, so it is signalled only when a member proves it is the run's by its token.
//     A leaderless group whose members all dropped the token (env -i) is left alone.
//
// A SIGSTOPped owner is alive: it keeps the guard, so no other process becomes owner and nobody
// touches its runs.

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/action"
	"github.com/routinely/routinely/scheduler/journal"
)

// RunTokenVar is the environment variable that marks every process of a run (see runToken).
const RunTokenVar = "ROUTINELY_RUN_TOKEN"

// Bounds of ending an orphan's processes: SIGTERM, then SIGKILL once the grace has passed with
// any of them left (defaultOrphanGrace, the grace a timed-out run gets; Engine.orphanGrace), then
// at most orphanKillWait for the kernel to finish them.
const (
	defaultOrphanGrace = action.DefaultKillGrace
	orphanKillWait     = 5 * time.Second
	orphanPoll         = 25 * time.Millisecond
)

// endOrphans ends the processes of every run an earlier epoch left `running` (see the top of
// this file) and records each such run `interrupted` with what was found. It returns only when
// those processes are gone or could not be ended within the bounds above. A run it cannot record
// stays `running` (logged) and the next owner deals with it again; its processes are gone by
// then all the same. Errors: the journal's, when the orphans cannot be listed (then nothing may
// start: their processes may still run).
func (e *Engine) endOrphans() error {
	orphans, err := e.j.Orphans()
	if err != nil || len(orphans) == 0 {
		return err
	}
	runs := make([]runProcs, len(orphans))
	for i, o := range orphans {
		runs[i] = runProcs{leader: o.Leader, token: o.Token}
	}
	endings := endRunProcesses(runs, e.orphanGrace)
	epoch := e.gate.Epoch()
	for i, o := range orphans {
		survivors := targetNames(endings[i].left)
		reason := orphanReason(o, len(endings[i].ended) > 0, survivors, epoch)
		logAt := e.log.Warn
		if len(survivors) > 0 {
			logAt = e.log.Error
		}
		logAt("run of an earlier owner cut short; recorded interrupted, not re-run", "routine", o.Routine,
			"run", o.ID, "epoch", o.Epoch, "reason", reason)
		if err := e.j.CloseOrphan(o.ID, reason, e.clock.Now()); err != nil {
			e.log.Error("record run of an earlier owner; the next owner will record it", "run", o.ID, "err", err)
		}
	}
	return nil
}

// runProcs is how the processes of one run are found: the last process it started (its
// leader; PID 0: none recorded) and its token (the value of RunTokenVar; "": none).
type runProcs struct {
	leader ownership.ProcessIdentity
	token  string
}

// runEnding is what endRunProcesses did for one run: the targets it found alive and asked to
// end (ended), and those of them still alive after SIGKILL (left).
type runEnding struct {
	ended, left []procTarget
}

// endRunProcesses ends every process of each of runs, wherever it is: the rules at the top of
// this file (runTargets), for an earlier owner's orphans, a run cut short by its timeout, a stop
// or a replace (Engine.endCutRun), and the runs of an owner about to exit without a drain
// (Engine.EndRunsNow). Every target gets SIGTERM, then SIGKILL once grace has passed with any of
// them left, then up to orphanKillWait to be gone, so it returns within about grace +
// orphanKillWait; at once, without reading any process's environment, when runs has nothing to
// look for. The result has one runEnding per run, in order.
func endRunProcesses(runs []runProcs, grace time.Duration) []runEnding {
	tokens := map[string]bool{}
	for _, r := range runs {
		if r.token != "" {
			tokens[r.token] = true
		}
	}
	carriers := processesWithTokens(tokens)
	out := make([]runEnding, len(runs))
	var all []procTarget
	for i, r := range runs {
		for _, t := range runTargets(r.leader, carriers[r.token]) {
			// Only what still runs: a leader that exited but awaits its reaper (a zombie) still
			// has its pid and start time, yet it and its exited group had already ended.
			if t.alive() {
				out[i].ended = append(out[i].ended, t)
			}
		}
		all = append(all, out[i].ended...)
	}
	left := endTargets(all, grace, orphanKillWait)
	for i := range out {
		for _, t := range out[i].ended {
			if left[t] {
				out[i].left = append(out[i].left, t)
			}
		}
	}
	return out
}

// targetNames returns how ts are named in history and the log ("process group 12", "pid 13").
func targetNames(ts []procTarget) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}

// orphanReason is the history reason of orphan o: whether it had processes to end (ended), and
// those still alive after SIGKILL (survivors); epoch is the new owner's.
func orphanReason(o journal.Orphan, ended bool, survivors []string, epoch uint64) string {
	const lead = "owner ended mid-run; "
	switch {
	case len(survivors) > 0:
		return fmt.Sprintf(lead+"its processes were still running and the new owner (epoch %d) could not end them (%s still alive after SIGKILL)",
			epoch, strings.Join(survivors, ", "))
	case ended:
		return fmt.Sprintf(lead+"its processes were still running and were ended by the new owner (epoch %d)", epoch)
	case o.Leader.PID != 0:
		return lead + "its processes had already exited"
	default:
		return lead + "no process of it was left running"
	}
}

// runTargets returns what to end for a run (rules 1 and 2 at the top of this file): the process
// group of its recorded leader when that leader still runs (same pid, same start time), and what
// carrierTargets makes of carriers (the live processes with the run's token). Never this process
// or its own group.
func runTargets(leader ownership.ProcessIdentity, carriers []int) []procTarget {
	var ts []procTarget
	if leader.PID > 1 && leader.State() == ownership.ProcessRunning {
		ts = append(ts, leaderTarget(leader.PID))
	}
	ts = append(ts, carrierTargets(carriers)...)
	var out []procTarget
	seen := map[procTarget]bool{}
	for _, t := range ts {
		if !seen[t] && !t.forbidden() {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// endTargets asks every target to stop (SIGTERM), waits up to grace for them to be gone, ends
// the rest (SIGKILL) and waits up to killWait more. It returns the targets still alive then.
func endTargets(ts []procTarget, grace, killWait time.Duration) map[procTarget]bool {
	if len(ts) == 0 {
		return nil
	}
	for _, t := range ts {
		t.terminate()
	}
	left := waitGone(ts, grace)
	for t := range left {
		t.kill()
	}
	return waitGone(ts, killWait)
}

// waitGone polls ts until none is alive or d has passed and returns those still alive.
func waitGone(ts []procTarget, d time.Duration) map[procTarget]bool {
	deadline := time.Now().Add(d)
	for {
		left := map[procTarget]bool{}
		for _, t := range ts {
			if t.alive() {
				left[t] = true
			}
		}
		if len(left) == 0 || !time.Now().Before(deadline) {
			return left
		}
		time.Sleep(orphanPoll)
	}
}

// processesWithTokens returns, for each of tokens, the pids of the live processes whose
// environment has RunTokenVar set to it (not this process). Processes whose environment cannot
// be read (other users', exited ones, zombies) are skipped: they are not this user's runs.
func processesWithTokens(tokens map[string]bool) map[string][]int {
	out := map[string][]int{}
	if len(tokens) == 0 {
		return out
	}
	pids, err := process.Pids()
	if err != nil {
		return out
	}
	self := os.Getpid()
	prefix := RunTokenVar + "="
	for _, pid := range pids {
		if int(pid) == self || pid <= 1 {
			continue
		}
		env, err := (&process.Process{Pid: pid}).Environ()
		if err != nil {
			continue
		}
		for _, kv := range env {
			if tok, ok := strings.CutPrefix(kv, prefix); ok && tokens[tok] {
				out[tok] = append(out[tok], int(pid))
				break
			}
		}
	}
	return out
}

// exitNowGrace is the SIGTERM-to-SIGKILL grace of EndRunsNow: shorter than a timeout's
// (action.DefaultKillGrace), because the person asked to exit now, yet long enough for a
// command that handles SIGTERM to remove its lock or temporary files.
const exitNowGrace = time.Second

// noteClaimed notes that run is claimed as run id, so that EndRunsNow can find its processes,
// and reports whether it may start: false once EndRunsNow has been called.
func (e *Engine) noteClaimed(run *inflight, id int64) bool {
	token := e.j.RunToken(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	run.id, run.procs.token = id, token
	if e.abandoned {
		return false
	}
	e.claimed[run] = true
	return true
}

// forgetClaimed notes that run has ended (recorded, or left for the next owner).
func (e *Engine) forgetClaimed(run *inflight) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.claimed, run)
}

// isAbandoned reports whether EndRunsNow has been called.
func (e *Engine) isAbandoned() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.abandoned
}

// endCutRun ends what is left of run id of routine after the action cut it short (timeout,
// stop, replace) and ended its process group: the processes that left the group but carry the
// run's token (see the top of this file), SIGTERM, then SIGKILL after the grace a timed-out
// group gets. It returns a note for the run's summary: "" when nothing was left, else what was
// ended and what could not be.
func (e *Engine) endCutRun(routine string, id int64, run *inflight) string {
	e.mu.Lock()
	procs := run.procs
	e.mu.Unlock()
	end := endRunProcesses([]runProcs{procs}, e.orphanGrace)[0]
	if len(end.ended) == 0 {
		return ""
	}
	ended := targetNames(end.ended)
	if len(end.left) > 0 {
		left := targetNames(end.left)
		e.log.Error("a cut-short run left processes outside its process group that could not be ended",
			"routine", routine, "run", id, "ended", ended, "alive", left)
		return fmt.Sprintf("; processes outside its process group still alive after SIGKILL: %s", strings.Join(left, ", "))
	}
	e.log.Warn("ended the processes a cut-short run left outside its process group", "routine", routine, "run", id, "ended", ended)
	return fmt.Sprintf("; also ended what it left outside its process group (%s)", strings.Join(ended, ", "))
}

// EndRunsNow is for a process about to exit without draining (a second stop signal): from now
// on the engine starts and records no run, and it ends every process of each run in flight —
// its process group and every process carrying its token, as the next owner would (see the top
// of this file) — with SIGTERM, then SIGKILL after exitNowGrace. It returns once they are gone,
// or could not be ended within about exitNowGrace + 5 s (logged); at once when no run is in
// flight. The runs stay `running` in the journal: the next owner records them `interrupted`, as
// after a crash, and finds their processes already gone. Safe to call more than once and from
// any goroutine; the engine is not usable for runs afterwards (Stop still ends the rest).
func (e *Engine) EndRunsNow() {
	e.mu.Lock()
	e.abandoned = true
	var runs []runProcs
	var names []string
	var ids []int64
	for run := range e.claimed {
		runs = append(runs, run.procs)
		names = append(names, run.a.r.Name)
		ids = append(ids, run.id)
	}
	e.mu.Unlock()
	if len(runs) == 0 {
		return
	}
	for i, end := range endRunProcesses(runs, exitNowGrace) {
		logAt := e.log.Warn
		if len(end.left) > 0 {
			logAt = e.log.Error
		}
		logAt("exiting now: ended a run in flight; the next owner records it interrupted", "routine", names[i],
			"run", ids[i], "ended", targetNames(end.ended), "alive", targetNames(end.left))
	}
}
