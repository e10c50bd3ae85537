//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needHangups fails the test at once when this process ignores SIGHUP (the tests were started
// under nohup): the daemons it starts inherit that (an ignored disposition survives execve, see
// signal(7)), so no hang-up could reach them and the test would only time out.
func needHangups(t *testing.T) {
	t.Helper()
	if signal.Ignored(syscall.SIGHUP) {
		t.Fatal("SIGHUP is ignored in this test process (started under nohup?) and the daemons it starts inherit that: run the tests without nohup")
	}
}

// slowRoutine is a config with one routine, "slow", that never fires by itself during a test
// and, when run, writes "start" to marker, works for 2 s, then writes "end".
func slowRoutine(marker string) string {
	return fmt.Sprintf(`
[[routine]]
name = "slow"
every = "1h"
catch_up = "skip"
shell = 'echo start >> %[1]q; sleep 2; echo end >> %[1]q'
timeout = "1m"
`, marker)
}

// startSlowRun asks the owner of home to run "slow" now and waits until the run has started.
func startSlowRun(t *testing.T, home, marker string) {
	t.Helper()
	if _, stderr, code := run(t, home, "run", "slow", "--no-wait"); code != 0 {
		t.Fatalf("run slow --no-wait: exit %d\n%s", code, stderr)
	}
	deadline := time.Now().Add(ownDeadline)
	for {
		if data, _ := os.ReadFile(marker); strings.Contains(string(data), "start") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow run did not start within %s", ownDeadline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertDrained checks that the run of "slow" in flight when the owner was told to stop
// finished (marker says "end", history says success, nothing interrupted) and that nobody owns.
func assertDrained(t *testing.T, home, marker string) {
	t.Helper()
	if data, _ := os.ReadFile(marker); !strings.Contains(string(data), "end") {
		t.Errorf("the run in flight did not finish: marker has %q", data)
	}
	stdout, _, code := run(t, home, "history", "slow", "--json")
	var hist []runOut
	if err := json.Unmarshal([]byte(stdout), &hist); err != nil || code != 0 {
		t.Fatalf("history --json: exit %d, %v\n%s", code, err, stdout)
	}
	if len(hist) != 1 || hist[0].Outcome != "success" {
		t.Errorf("history = %+v, want the one run with outcome success", hist)
	}
	if s := status(t, home); s.Held || s.ExitCode != 3 {
		t.Errorf("after the drain: %+v, want no owner (exit 3)", s)
	}
}

// SIGHUP (a closed terminal or ssh session) drains like SIGTERM: the run in flight finishes
// with success, the daemon logs the signal, releases and exits 0. A further SIGHUP, as a shell
// sends to its jobs after the kernel's, does not cut the drain.
func TestSIGHUPDrains(t *testing.T) {
	needHangups(t)
	marker := filepath.Join(t.TempDir(), "marker")
	home := newHome(t, slowRoutine(marker))
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	startSlowRun(t, home, marker)

	d.signal(syscall.SIGHUP)
	d.waitStderr("signal=SIGHUP", ownDeadline)
	d.signal(syscall.SIGHUP)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon after SIGHUP: exit %d, want 0 (drained)", code)
	}
	stderr := d.stderr.String()
	for _, want := range []string{"stopping: no new runs; waiting for runs in flight", "Stopped on SIGHUP; the routines are released."} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	assertDrained(t, home, marker)
}

// A daemon whose stderr is a pipe that nobody reads any more (`routinely daemon 2>&1 | tee log`
// with tee gone with the terminal) still drains on SIGHUP: its log lines fail, they do not kill
// it (Go's default for a write to a broken pipe on stderr is death by SIGPIPE).
func TestSIGHUPDrainsWithStderrGone(t *testing.T) {
	needHangups(t)
	marker := filepath.Join(t.TempDir(), "marker")
	home := newHome(t, slowRoutine(marker))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--home", home, "daemon")
	cmd.Env = testEnv()
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	// Read stderr until the daemon owns, then close the pipe's only reader.
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "Owning the routines") {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("daemon stderr ended before it owned: %v\n%s", err, seen.String())
		}
		seen.Write(buf[:n])
	}
	r.Close()
	startSlowRun(t, home, marker)

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if code := exitCode(err); code != 0 {
			t.Fatalf("daemon with its stderr gone, after SIGHUP: %v (exit %d), want exit 0 after the drain", err, code)
		}
	case <-time.After(cmdTimeout):
		t.Fatalf("daemon still running %s after SIGHUP", cmdTimeout)
	}
	assertDrained(t, home, marker)
}

// Under nohup (SIGHUP ignored from the start) the daemon outlives a hang-up, as its user asked.
func TestSIGHUPIgnoredUnderNohup(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Fatalf("nohup (coreutils) not found: %v", err)
	}
	home := newHome(t, hourly)
	cmd := exec.Command(nohup, bin, "--home", home, "daemon")
	cmd.Env = testEnv()
	d := startCmd(t, cmd, "nohup routinely daemon")
	waitOwner(t, home, d.pid()) // nohup execs routinely: same pid
	d.signal(syscall.SIGHUP)
	time.Sleep(time.Second)
	if !d.running() {
		t.Fatalf("the daemon under nohup exited %d on SIGHUP", d.code)
	}
	if s := waitOwner(t, home, d.pid()); s.ExitCode != 0 {
		t.Fatalf("after SIGHUP under nohup: %+v, want a healthy owner", s)
	}
	d.signal(syscall.SIGTERM)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("SIGTERM: exit %d, want 0", code)
	}
}

// From the moment the owner starts stopping, status says draining (within 200 ms, not at its
// next heartbeat: this one beats every 10 s), and a plain `daemon` says the owner is stopping
// and suggests --wait rather than telling the person to stop it (which would cut the drain).
func TestDrainVisibleAtOnce(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	home := newHome(t, slowRoutine(marker))
	d := start(t, home, "daemon", "--heartbeat", "10s")
	waitOwner(t, home, d.pid())
	startSlowRun(t, home, marker)

	signalled := time.Now()
	d.signal(syscall.SIGTERM)
	time.Sleep(time.Until(signalled.Add(200 * time.Millisecond)))
	s := status(t, home)
	if s.Owner == nil || s.Owner.State != "yielding" || s.ExitCode != 4 || len(s.Diagnoses) == 0 || s.Diagnoses[0].Kind != "draining" {
		t.Fatalf("status 200 ms after SIGTERM, with a run in flight: %+v, want state yielding, diagnosis draining, exit 4", s)
	}

	_, stderr, code := run(t, home, "daemon")
	if code != 75 {
		t.Fatalf("daemon during a drain: exit %d, want 75\n%s", code, stderr)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", d.pid()), "is stopping", "1 run in flight", "routinely daemon --wait"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("daemon during a drain: message lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "kill") {
		t.Errorf("daemon during a drain advises stopping the owner:\n%s", stderr)
	}
	if !d.running() {
		t.Fatal("the owner exited before its run finished")
	}
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon after SIGTERM: exit %d, want 0", code)
	}
	assertDrained(t, home, marker)
}
