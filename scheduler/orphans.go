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
// Which processes are an orphan's (orphanTargets):
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
	tokens := map[string]bool{}
	for _, o := range orphans {
		tokens[o.Token] = true
	}
	carriers := processesWithTokens(tokens)
	targets := make([][]procTarget, len(orphans))
	var all []procTarget
	for i, o := range orphans {
		for _, t := range orphanTargets(o, carriers[o.Token]) {
			// Only what still runs: a leader that exited but awaits its reaper (a zombie) still
			// has its pid and start time, yet it and its exited group had already ended.
			if t.alive() {
				targets[i] = append(targets[i], t)
			}
		}
		all = append(all, targets[i]...)
	}
	left := endTargets(all, e.orphanGrace, orphanKillWait)
	epoch := e.gate.Epoch()
	for i, o := range orphans {
		var survivors []string
		for _, t := range targets[i] {
			if left[t] {
				survivors = append(survivors, t.String())
			}
		}
		reason := orphanReason(o, len(targets[i]) > 0, survivors, epoch)
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

// orphanTargets returns what to end for orphan o (rules 1 and 2 at the top of this file): the
// recorded leader's process group when that leader still runs, and what carrierTargets makes of
// carriers (the live processes with o's token). Never this process or its own group.
func orphanTargets(o journal.Orphan, carriers []int) []procTarget {
	var ts []procTarget
	if o.Leader.PID > 1 && o.Leader.State() == ownership.ProcessRunning {
		ts = append(ts, leaderTarget(o.Leader.PID))
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
