//go:build windows

package scheduler

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// procTarget is what endTargets ends: one process. Windows has no process groups; a run's tree
// is its Job Object, which the kernel ends when the dying owner's handle closes (kill on close,
// scheduler/action), and every process of the run carries its token (carrierTargets).
type procTarget struct{ id int }

func (t procTarget) String() string { return fmt.Sprintf("pid %d", t.id) }

// leaderTarget is the run's recorded leader process.
func leaderTarget(pid int) procTarget { return procTarget{id: pid} }

// carrierTargets returns one target per process that carries an orphan's token.
func carrierTargets(pids []int) []procTarget {
	out := make([]procTarget, 0, len(pids))
	for _, pid := range pids {
		out = append(out, procTarget{id: pid})
	}
	return out
}

// forbidden reports whether t must never be ended: this process, and the System Idle (0) and
// System (4) processes.
func (t procTarget) forbidden() bool { return t.id <= 4 || t.id == os.Getpid() }

// terminate ends t at once: Windows has no SIGTERM that reaches a process without a console.
func (t procTarget) terminate() { t.kill() }

// kill ends t (TerminateProcess).
func (t procTarget) kill() {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(t.id))
	if err != nil {
		return // gone, or not ours: alive reports it
	}
	defer windows.CloseHandle(h)
	_ = windows.TerminateProcess(h, 1)
}

// alive reports whether t has not exited. A process that exited but whose object is still held
// open by someone is signalled (exited), so it is not alive.
func (t procTarget) alive() bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(t.id))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return false // no such process
	}
	if err != nil {
		return true // exists but cannot be opened
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err != nil || ev != windows.WAIT_OBJECT_0
}
