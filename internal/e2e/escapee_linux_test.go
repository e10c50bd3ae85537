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
