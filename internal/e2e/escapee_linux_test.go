//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escapeConfig is a routine, "escape", that never fires by itself during a test and, when run,
// starts a process that leaves the run's process group for a session of its own (setsid, as a
// command that daemonizes does) and writes its pid to dir/escapee, writes the shell's pid to
// dir/shell, then sleeps 30 s, beyond timeout ("" for none).
func escapeConfig(dir, timeout string) string {
	t := ""
	if timeout != "" {
		t = fmt.Sprintf("timeout = %q\n", timeout)
	}
	return fmt.Sprintf(`
[[routine]]
name = "escape"
every = "1h"
catch_up = "skip"
%sshell = '''
setsid sh -c 'echo $$ > %[2]q; exec sleep 1000' &
echo $$ > %[3]q
sleep 30
'''
`, t, filepath.Join(dir, "escapee"), filepath.Join(dir, "shell"))
}

// readPID waits until file holds a pid and returns it.
func readPID(t *testing.T, file string) string {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for {
		b, _ := os.ReadFile(file)
		if pid := strings.TrimSpace(string(b)); pid != "" && strings.HasSuffix(string(b), "\n") {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after %s", file, ownDeadline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killAtEnd makes sure pid does not outlive the test, whatever the test found.
func killAtEnd(t *testing.T, pid string) {
	t.Cleanup(func() {
		var n int
		if _, err := fmt.Sscan(pid, &n); err == nil && n > 1 {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	})
}

// waitGoneWithin fails the test if pid still runs d from now.
func waitGoneWithin(t *testing.T, pid, what string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for processRunning(pid) {
		if time.Now().After(deadline) {
			t.Errorf("%s (pid %s) still runs %s later", what, pid, d)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A run cut off by its timeout ends all of its processes, not only its process group: a process
// that left the group (setsid) but carries the run's ROUTINELY_RUN_TOKEN is gone too, as the
// next owner would end it after a crash (docs/design.md#59).
func TestTimeoutEndsTheRunsSetsidEscapee(t *testing.T) {
	dir := t.TempDir()
	home := newHome(t, escapeConfig(dir, "2s"))
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	if _, stderr, code := run(t, home, "run", "escape", "--no-wait"); code != 0 {
		t.Fatalf("run escape --no-wait: exit %d\n%s", code, stderr)
	}
	escapee := readPID(t, filepath.Join(dir, "escapee"))
	killAtEnd(t, escapee)
	waitRun(t, home, "escape", "the run recorded timeout", func(r runOut) bool { return r.Outcome == "timeout" })
	waitGoneWithin(t, escapee, "the run's setsid escapee", 2*time.Second)
	d.stopWith(syscall.SIGTERM)
}

// GNU timeout sends its signal twice, to the child and then to the child's process group, which
// the child leads: two SIGTERMs microseconds apart are one request to stop. The daemon drains:
// its run finishes and is recorded success, and it exits 0.
func TestTwoSIGTERMsAtOnceAreOneStop(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	home := newHome(t, slowRoutine(marker))
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	startSlowRun(t, home, marker)

	if err := syscall.Kill(d.pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// What timeout(1) does (kill(pid), then kill(0) with itself ignoring the signal); a pause
	// this short still lets the daemon's runtime take the first signal before the second comes,
	// so that the two are not merged by the kernel into one pending signal.
	time.Sleep(200 * time.Microsecond)
	if err := syscall.Kill(d.pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon after two SIGTERMs at once: exit %d, want 0 (drained); stderr:\n%s", code, d.stderr.String())
	}
	assertDrained(t, home, marker)
}

// A second SIGTERM well after the first still means "exit now", but the run in flight does not
// outlive the daemon: its process group and the process that left it (setsid) are gone by the
// time the daemon has exited. The run is recorded by the next owner, as after a crash.
func TestExitNowEndsTheRunsProcesses(t *testing.T) {
	dir := t.TempDir()
	home := newHome(t, escapeConfig(dir, "1m"))
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	if _, stderr, code := run(t, home, "run", "escape", "--no-wait"); code != 0 {
		t.Fatalf("run escape --no-wait: exit %d\n%s", code, stderr)
	}
	escapee := readPID(t, filepath.Join(dir, "escapee"))
	killAtEnd(t, escapee)
	shell := readPID(t, filepath.Join(dir, "shell"))
	killAtEnd(t, shell)

	d.signal(syscall.SIGTERM)
	d.waitStderr("waiting for runs in flight", ownDeadline)
	time.Sleep(1500 * time.Millisecond) // past the window in which a repeat is the same request
	d.signal(syscall.SIGTERM)
	if code := d.wait(ownDeadline); code != 143 {
		t.Fatalf("second SIGTERM: exit %d, want 143", code)
	}
	for pid, what := range map[string]string{shell: "the run's shell", escapee: "the run's setsid escapee"} {
		if processRunning(pid) {
			t.Errorf("%s (pid %s) still runs after the daemon exited", what, pid)
		}
	}
	next := start(t, home, "daemon")
	waitOwner(t, home, next.pid())
	r := waitRun(t, home, "escape", "the run recorded interrupted by the next owner", func(r runOut) bool { return r.Outcome == "interrupted" })
	if !strings.Contains(r.Reason, "had already exited") {
		t.Errorf("reason %q: want the next owner to find the run's processes gone", r.Reason)
	}
	next.stopWith(syscall.SIGTERM)
}
