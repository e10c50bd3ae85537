//go:build unix

package action

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests start real /bin/sh children and grandchildren and send real signals.

func newCommand(t *testing.T, spec any, grace time.Duration) Action {
	t.Helper()
	a, err := New(spec, Deps{KillGrace: grace})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func TestRunExecsWithoutAShellAndKeepsOutput(t *testing.T) {
	t.Parallel()
	a := newCommand(t, RunSpec{Argv: []string{"/bin/echo", "a  b", "$HOME", "*"}}, time.Second)
	res := a.Run(context.Background(), Input{Routine: "echo", Timeout: 10 * time.Second})
	if res.Outcome != OutcomeSuccess || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("got %+v, want success exit 0", res)
	}
	if got := string(res.Output); got != "a  b $HOME *\n" {
		t.Fatalf("output %q: arguments were changed, as if a shell ran", got)
	}
}

func TestShellCombinesOutputAndKeepsExitCode(t *testing.T) {
	t.Parallel()
	a := newCommand(t, ShellSpec{Script: `echo out; echo err >&2; echo "$ROUTINELY_TEST_VAR"; exit 3`}, time.Second)
	res := a.Run(context.Background(), Input{Env: []string{"ROUTINELY_TEST_VAR=from-input"}, Timeout: 10 * time.Second})
	if res.Outcome != OutcomeFailed || res.ExitCode == nil || *res.ExitCode != 3 {
		t.Fatalf("got outcome %q exit %v, want failed exit 3", res.Outcome, res.ExitCode)
	}
	for _, want := range []string{"out\n", "err\n", "from-input\n"} {
		if !bytes.Contains(res.Output, []byte(want)) {
			t.Errorf("output %q lacks %q", res.Output, want)
		}
	}
	if res.Summary != "exit status 3" {
		t.Errorf("summary %q, want %q", res.Summary, "exit status 3")
	}
}

func TestRunInheritsEnvironment(t *testing.T) {
	t.Setenv("ROUTINELY_INHERITED", "yes")
	a := newCommand(t, ShellSpec{Script: `printf %s "$ROUTINELY_INHERITED"`}, time.Second)
	if res := a.Run(context.Background(), Input{Timeout: 10 * time.Second}); string(res.Output) != "yes" {
		t.Fatalf("output %q, want the parent's variable", res.Output)
	}
}

func TestRunDirExpandsTilde(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	a := newCommand(t, RunSpec{Argv: []string{"pwd", "-P"}}, time.Second)
	res := a.Run(context.Background(), Input{Dir: "~/work", Timeout: 10 * time.Second})
	want, _ := filepath.EvalSymlinks(filepath.Join(home, "work"))
	if res.Outcome != OutcomeSuccess || strings.TrimSpace(string(res.Output)) != want {
		t.Fatalf("got %q (%s), want %q", res.Output, res.Outcome, want)
	}
}

func TestRunThatCannotStartIsCrashed(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		argv []string
		dir  string
	}{
		"missing program": {argv: []string{"/nonexistent/routinely-no-such-program"}},
		"missing dir":     {argv: []string{"true"}, dir: filepath.Join(t.TempDir(), "gone")},
	} {
		res := newCommand(t, RunSpec{Argv: tc.argv}, time.Second).Run(context.Background(), Input{Dir: tc.dir, Timeout: 10 * time.Second})
		if res.Outcome != OutcomeCrashed || res.ExitCode != nil || !strings.Contains(res.Summary, "could not start") {
			t.Errorf("%s: got %+v, want crashed without exit code", name, res)
		}
	}
}

func TestOutputIsCappedWithANote(t *testing.T) {
	t.Parallel()
	const total = 200_000
	a := newCommand(t, ShellSpec{Script: fmt.Sprintf(`head -c %d /dev/zero | tr '\000' a`, total)}, time.Second)
	res := a.Run(context.Background(), Input{Timeout: 10 * time.Second})
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("outcome %q: %s", res.Outcome, res.Summary)
	}
	if len(res.Output) > MaxOutput {
		t.Fatalf("output is %d bytes, cap is %d", len(res.Output), MaxOutput)
	}
	kept := bytes.IndexByte(res.Output, '\n') // the kept "aaa..." run ends where the note begins
	note := fmt.Sprintf("[output truncated: %d bytes not kept]", total-kept)
	if kept < MaxOutput-100 || !bytes.HasSuffix(res.Output, []byte(note+"\n")) {
		t.Fatalf("kept %d bytes, tail %q; want most of the cap and note %q", kept, res.Output[len(res.Output)-60:], note)
	}
}

// TestTimeoutTermsTheGroupThenKillsIt: the child ignores SIGTERM and has a grandchild that
// ignores it too and holds the output pipe. A kill of the child alone would leave the
// grandchild running; the group kill after the grace must end both.
func TestTimeoutTermsTheGroupThenKillsIt(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	const grace = 700 * time.Millisecond
	a := newCommand(t, ShellSpec{Script: `trap '' TERM; sleep 300 & echo $! > "$PIDFILE"; echo started; wait`}, grace)

	start := time.Now()
	res := a.Run(context.Background(), Input{Env: []string{"PIDFILE=" + pidFile}, Timeout: 400 * time.Millisecond})
	elapsed := time.Since(start)

	if res.Outcome != OutcomeTimeout {
		t.Fatalf("outcome %q (%s), want timeout", res.Outcome, res.Summary)
	}
	if elapsed < 400*time.Millisecond+grace-50*time.Millisecond {
		t.Fatalf("returned after %v: SIGKILL came before the %v grace", elapsed, grace)
	}
	if elapsed > 400*time.Millisecond+grace+4*time.Second {
		t.Fatalf("returned after %v: the group was not killed at the end of the grace", elapsed)
	}
	if !bytes.Contains(res.Output, []byte("started")) {
		t.Errorf("output %q lacks what the child printed before the timeout", res.Output)
	}
	pid := readPid(t, pidFile)
	waitGone(t, pid, 3*time.Second)
}

// TestTimeoutSendsTermFirst: a child that handles SIGTERM gets to run its handler and exit on
// its own, well before the grace ends.
func TestTimeoutSendsTermFirst(t *testing.T) {
	t.Parallel()
	const grace = 5 * time.Second
	a := newCommand(t, ShellSpec{Script: `trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.05; done`}, grace)
	start := time.Now()
	res := a.Run(context.Background(), Input{Timeout: 300 * time.Millisecond})
	if elapsed := time.Since(start); elapsed > grace-time.Second {
		t.Fatalf("returned after %v: the TERM handler did not end the run", elapsed)
	}
	if res.Outcome != OutcomeTimeout || res.ExitCode == nil || *res.ExitCode != 7 {
		t.Fatalf("got outcome %q exit %v, want timeout with the handler's exit 7", res.Outcome, res.ExitCode)
	}
	if !bytes.Contains(res.Output, []byte("got-term")) {
		t.Fatalf("output %q: the TERM handler did not run", res.Output)
	}
}

// TestTermReachesGrandchildren: the child traps TERM but its grandchild does not; only a signal
// to the whole group reaches the grandchild before the grace ends.
func TestTermReachesGrandchildren(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	a := newCommand(t, ShellSpec{Script: `sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$PIDFILE"; trap 'wait; exit 0' TERM; while :; do sleep 0.05; done`}, 5*time.Second)
	start := time.Now()
	res := a.Run(context.Background(), Input{Env: []string{"PIDFILE=" + pidFile}, Timeout: 300 * time.Millisecond})
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Fatalf("returned after %v: the grandchild (which the child waits for) did not get SIGTERM", elapsed)
	}
	if res.Outcome != OutcomeTimeout {
		t.Fatalf("outcome %q, want timeout", res.Outcome)
	}
	waitGone(t, readPid(t, pidFile), 3*time.Second)
}

func TestCancelIsInterrupted(t *testing.T) {
	t.Parallel()
	a := newCommand(t, ShellSpec{Script: `sleep 300`}, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res := a.Run(ctx, Input{Timeout: 30 * time.Second})
	if res.Outcome != OutcomeInterrupted {
		t.Fatalf("outcome %q, want interrupted", res.Outcome)
	}
}

// TestBackgroundProcessDoesNotHoldTheRun: a command that exits 0 but leaves a process holding
// its output open finishes after the grace, with its output and a note.
func TestBackgroundProcessDoesNotHoldTheRun(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "bg.pid")
	const grace = 500 * time.Millisecond
	a := newCommand(t, ShellSpec{Script: `echo hi; sleep 300 & echo $! > "$PIDFILE"`}, grace)
	start := time.Now()
	res := a.Run(context.Background(), Input{Env: []string{"PIDFILE=" + pidFile}, Timeout: 30 * time.Second})
	elapsed := time.Since(start)
	pid := readPid(t, pidFile)
	_ = syscall.Kill(pid, syscall.SIGKILL) // the test's own cleanup: Run leaves it alone by design
	if elapsed > grace+4*time.Second {
		t.Fatalf("returned after %v: waited for the background process", elapsed)
	}
	if res.Outcome != OutcomeSuccess || !bytes.HasPrefix(res.Output, []byte("hi\n")) || !bytes.Contains(res.Output, []byte("stopped reading output")) {
		t.Fatalf("got %q / %q, want success with output and a note", res.Outcome, res.Output)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid
}

// waitGone fails the test unless pid has exited (or is a zombie awaiting its reaper) within d.
func waitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if !processRunning(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still running %v after the run ended", pid, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processRunning(pid int) bool {
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// Field 3, after the parenthesised command name, is the state; Z is a zombie.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			return stat[i+2] != 'Z'
		}
		return true
	} else if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
		return false // /proc works and the pid has no entry
	}
	return syscall.Kill(pid, 0) == nil
}
