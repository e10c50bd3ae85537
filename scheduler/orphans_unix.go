//go:build unix

package scheduler

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// procTarget is what endTargets signals: a process group (kill(2) with -id) or one process.
type procTarget struct {
	id    int
	group bool
}

func (t procTarget) String() string {
	if t.group {
		return fmt.Sprintf("process group %d", t.id)
	}
	return fmt.Sprintf("pid %d", t.id)
}

// leaderTarget is the process group that the run leader pid leads (the action starts every
// command as the leader of a new group, so the group id is its pid).
func leaderTarget(pid int) procTarget { return procTarget{id: pid, group: true} }

// carrierTargets returns what to end for the live processes pids that carry an orphan's token:
// a carrier's process group when that group is the run's — its leader carries the token too, or
// has exited (rule 2 at the top of orphans.go) — and otherwise the carrier alone, so that a
// process that joined some other live group never brings that group down with it.
func carrierTargets(pids []int) []procTarget {
	carrier := map[int]bool{}
	for _, pid := range pids {
		carrier[pid] = true
	}
	var out []procTarget
	for _, pid := range pids {
		pgid, err := syscall.Getpgid(pid)
		switch {
		case errors.Is(err, syscall.ESRCH):
			// exited since the scan
		case err != nil:
			out = append(out, procTarget{id: pid})
		case carrier[pgid] || !pidAlive(pgid):
			out = append(out, procTarget{id: pgid, group: true})
		default:
			out = append(out, procTarget{id: pid})
		}
	}
	return out
}

// forbidden reports whether t must never be signalled: this process or its own group, and ids
// 0 and 1 (init, and kill(2)'s "my group" and "every process").
func (t procTarget) forbidden() bool {
	if t.id <= 1 {
		return true
	}
	if t.group {
		return t.id == syscall.Getpgrp()
	}
	return t.id == os.Getpid()
}

func (t procTarget) signal(sig syscall.Signal) {
	id := t.id
	if t.group {
		id = -id
	}
	_ = syscall.Kill(id, sig) // ESRCH: gone already; EPERM: reported by alive as a survivor
}

// terminate asks t to stop (SIGTERM).
func (t procTarget) terminate() { t.signal(syscall.SIGTERM) }

// kill ends t (SIGKILL).
func (t procTarget) kill() { t.signal(syscall.SIGKILL) }

// alive reports whether t still has a live process. A zombie (exited, not yet reaped by its
// new parent) is not alive: it runs nothing, and reaping it is not ours to wait for.
func (t procTarget) alive() bool {
	if !t.group {
		return pidAlive(t.id)
	}
	if err := syscall.Kill(-t.id, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return groupHasLiveMember(t.id)
}

// pidAlive reports whether process pid exists and is not a zombie (EPERM: it exists).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !isZombie(pid)
}
