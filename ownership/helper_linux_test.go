package ownership

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// osHelperModes are the helper modes only Linux has.
var osHelperModes = map[string]func() int{"probe": helperProbe, "fdtable": helperFDTable}

// lockHolderKnown: Linux names the guard's holder (/proc/locks), so Status.HolderPID is the pid.
const lockHolderKnown = true

// helperProbe reports what this process (possibly unprivileged) sees of another process.
func helperProbe() int {
	f := strings.Fields(os.Getenv(envArgs))
	pid, _ := strconv.Atoi(f[0])
	ms, _ := strconv.ParseInt(f[1], 10, 64)
	ticks, _ := strconv.ParseUint(f[2], 10, 64)
	err := syscall.Kill(pid, 0)
	say("probe uid=%d alive=%v kill0=%v", os.Getuid(), sameProcess(procIdentity{PID: pid, StartMS: ms, StartTicks: ticks}), err)
	return 0
}

// spawnChildren starts two children that outlive this process: one through a shell in the
// background (reparented to init when we die), one a direct child. It returns their pids.
func spawnChildren() ([]string, error) {
	bg, err := exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		return nil, err
	}
	fg := exec.Command("sleep", "60")
	if err := fg.Start(); err != nil {
		return nil, err
	}
	return []string{strings.TrimSpace(string(bg)), fmt.Sprint(fg.Process.Pid)}, nil
}

// assertNoGuardHandle fails tb when any of the processes kids has owner.lock of dir open: an
// inherited descriptor would share the guard's open file description and so its flock.
func assertNoGuardHandle(tb testing.TB, dir string, _ *proc, kids []string) {
	tb.Helper()
	guard, err := os.Stat(filepath.Join(dir, lockName))
	if err != nil {
		tb.Fatal(err)
	}
	for _, k := range kids {
		fds, err := os.ReadDir("/proc/" + k + "/fd")
		if err != nil {
			tb.Fatal(err)
		}
		for _, fd := range fds {
			if fi, err := os.Stat("/proc/" + k + "/fd/" + fd.Name()); err == nil && os.SameFile(fi, guard) {
				tb.Fatalf("child %s holds owner.lock as fd %s", k, fd.Name())
			}
		}
	}
}

// suspend stops p as a sleeping machine would (SIGSTOP): it runs no code and keeps its
// descriptors, and so the guard.
func suspend(tb testing.TB, p *proc) {
	tb.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatalf("SIGSTOP pid %d: %v", p.pid(), err)
	}
}

// resume continues a suspended p (SIGCONT).
func resume(tb testing.TB, p *proc) {
	tb.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		tb.Fatalf("SIGCONT pid %d: %v", p.pid(), err)
	}
}
