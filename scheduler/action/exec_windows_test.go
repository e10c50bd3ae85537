package action

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/routinely/routinely/internal/proctest"
)

// These tests start real Windows process trees (copies of this test binary) and cmd.exe, and
// check that a run's Job Object ends the whole tree: at the timeout, and when the owner running
// it dies.

// The test binary re-executes itself as a helper when helperEnv names a mode:
//   - "tree": start a "sleep" copy of itself (the grandchild of the run), write its pid to
//     $ROUTINELY_ACTION_PIDFILE, print "started", then sleep;
//   - "sleep": sleep five minutes;
//   - "owner": run the "tree" command as a run action (as an owner does) until killed.
const (
	helperEnv  = "ROUTINELY_ACTION_HELPER"
	pidFileEnv = "ROUTINELY_ACTION_PIDFILE"
)

func init() {
	switch os.Getenv(helperEnv) {
	case "":
		return
	case "sleep":
		time.Sleep(5 * time.Minute)
	case "tree":
		c, err := proctest.Start(proctest.Stderr, func() *exec.Cmd {
			c := exec.Command(os.Args[0], "-test.run=^$")
			c.Env = append(os.Environ(), helperEnv+"=sleep")
			return c
		})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if err := os.WriteFile(os.Getenv(pidFileEnv), []byte(strconv.Itoa(c.Process.Pid)), 0o600); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("started")
		time.Sleep(5 * time.Minute)
	case "owner":
		a, err := New(treeSpec(), Deps{KillGrace: time.Second})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		a.Run(context.Background(), Input{Env: treeEnv(os.Getenv(pidFileEnv)), Timeout: 5 * time.Minute})
	}
	os.Exit(0)
}

// treeSpec runs this test binary as the "tree" helper.
func treeSpec() RunSpec { return RunSpec{Argv: []string{os.Args[0], "-test.run=^$"}} }

func treeEnv(pidFile string) []string {
	return []string{helperEnv + "=tree", pidFileEnv + "=" + pidFile}
}

// cmd /C runs the script with its output combined and its exit code kept.
func TestShellRunsThroughCmd(t *testing.T) {
	a, err := New(ShellSpec{Script: `echo out& echo err 1>&2& echo %ROUTINELY_TEST_VAR%& exit 3`}, Deps{KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Run(context.Background(), Input{Env: []string{"ROUTINELY_TEST_VAR=from-input"}, Timeout: 30 * time.Second})
	if res.Outcome != OutcomeFailed || res.ExitCode == nil || *res.ExitCode != 3 {
		t.Fatalf("got %+v, want failed exit 3", res)
	}
	for _, want := range []string{"out", "err", "from-input"} {
		if !bytes.Contains(res.Output, []byte(want)) {
			t.Errorf("output %q lacks %q", res.Output, want)
		}
	}
}

// At the timeout the whole job ends, the grandchild too, although only the child was started by
// the action: Windows has no process groups to signal, the Job Object is the tree.
func TestTimeoutEndsTheWholeJob(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	a, err := New(treeSpec(), Deps{KillGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Run(context.Background(), Input{Env: treeEnv(pidFile), Timeout: 2 * time.Second})
	if res.Outcome != OutcomeTimeout {
		t.Fatalf("outcome %q (%s), want timeout; output %q", res.Outcome, res.Summary, res.Output)
	}
	if !bytes.Contains(res.Output, []byte("started")) {
		t.Fatalf("output %q: the tree never started", res.Output)
	}
	waitProcessGone(t, readPidFile(t, pidFile), 5*time.Second)
}

// The owner running a command dies (TerminateProcess, as a crash or `taskkill /F`): the kernel
// closes its only handle to the run's job, which is kill-on-close, so the run's whole tree ends
// with it. A run never outlives its owner (docs/design.md#411-runs-never-outlive-their-owner).
func TestOwnerDeathEndsTheRunsTree(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	owner := exec.Command(os.Args[0], "-test.run=^$")
	owner.Env = append(os.Environ(), helperEnv+"=owner", pidFileEnv+"="+pidFile)
	owner, err := proctest.StartCmd(t, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = owner.Process.Kill(); _ = owner.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, err := os.ReadFile(pidFile); err == nil && len(data) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the owner's run never started its tree")
		}
		time.Sleep(20 * time.Millisecond)
	}
	grandchild := readPidFile(t, pidFile)
	if !processRunning(grandchild) {
		t.Fatalf("grandchild %d not running before the owner died; the check below would prove nothing", grandchild)
	}
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = owner.Wait()
	waitProcessGone(t, grandchild, 5*time.Second)
}

func readPidFile(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// processRunning reports whether pid names a process that has not exited: one whose handle is
// not yet signalled (a process handle is signalled when the process ends).
func processRunning(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false // no such process (any more)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

func waitProcessGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for processRunning(pid) {
		if time.Now().After(deadline) {
			_ = exec.Command("taskkill", "/F", "/PID", strconv.Itoa(pid)).Run()
			t.Fatalf("process %d still running %s later: the job did not end it", pid, within)
		}
		time.Sleep(25 * time.Millisecond)
	}
}
