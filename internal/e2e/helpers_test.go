//go:build unix || windows

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routinely/routinely/internal/proctest"
	"github.com/routinely/routinely/internal/syncbuf"
)

// Generous bounds: the suite runs on a loaded 2-core CI machine.
const (
	cmdTimeout  = 60 * time.Second
	ownDeadline = 20 * time.Second
)

// newHome returns a fresh profile directory with routines.toml set to config.
func newHome(t *testing.T, config string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, config)
	return home
}

func writeConfig(t *testing.T, home, config string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "routines.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
}

// hourly is a harmless config: one notify routine that will not fire during a test.
const hourly = `
[[routine]]
name = "hourly-note"
every = "1h"
notify = { title = "hello", body = "from the e2e test" }
`

// proc is a routinely process started in the background.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *syncbuf.Buffer
	stderr *syncbuf.Buffer
	done   chan struct{}
	code   int
}

// start runs routinely --home home args... in the background; it is SIGKILLed at test end if
// still running.
func start(t *testing.T, home string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
	cmd.Env = testEnv()
	return startCmd(t, cmd, fmt.Sprintf("routinely %v", args))
}

// startCmd starts cmd in the background with its output captured; it is SIGKILLed at test end if
// still running, and its output is logged if the test failed. label names it in messages.
func startCmd(t *testing.T, cmd *exec.Cmd, label string) *proc {
	t.Helper()
	p := &proc{t: t, cmd: cmd, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if p.cmd.SysProcAttr == nil {
		p.cmd.SysProcAttr = signalableAttr() // so that signal can reach it (Windows)
	}
	started, err := proctest.StartCmd(t, p.cmd)
	if err != nil {
		t.Fatalf("start %s: %v", label, err)
	}
	p.cmd = started
	go func() {
		err := p.cmd.Wait()
		p.code = exitCode(err)
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s (pid %d) stdout:\n%s\nstderr:\n%s", label, p.pid(), p.stdout.String(), p.stderr.String())
		}
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := sendSignal(p.cmd.Process, sig); err != nil {
		p.t.Fatalf("signal %v to pid %d: %v", sig, p.pid(), err)
	}
}

// stopWith asks p to stop with sig (SIGINT or SIGTERM): it drains, releases and must exit 0
// within cmdTimeout, or the test fails. Where the OS cannot deliver the stop to a child
// (gracefulStopUntestable says why), p is killed instead and only that is logged.
func (p *proc) stopWith(sig syscall.Signal) {
	p.t.Helper()
	if why := gracefulStopUntestable(); why != "" {
		p.t.Logf("%s: pid %d is killed instead, and its exit is not checked", why, p.pid())
		_ = p.cmd.Process.Kill()
		<-p.done
		return
	}
	p.signal(sig)
	if code := p.wait(cmdTimeout); code != 0 {
		p.t.Fatalf("%v: exit %d, want 0; stderr:\n%s", sig, code, p.stderr.String())
	}
}

// wait returns the exit code, failing the test if the process has not exited within d.
func (p *proc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		p.t.Fatalf("pid %d still running after %s; stderr:\n%s", p.pid(), d, p.stderr.String())
		return -1
	}
}

// running reports whether the process has not exited.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// waitStderr waits until the process's stderr contains substr.
func (p *proc) waitStderr(substr string, d time.Duration) {
	p.t.Helper()
	p.waitOutput(p.stderr, "stderr", substr, d)
}

// waitStdout waits until the process's stdout contains substr.
func (p *proc) waitStdout(substr string, d time.Duration) {
	p.t.Helper()
	p.waitOutput(p.stdout, "stdout", substr, d)
}

// waitOutput polls out until it contains substr, failing the test after d.
func (p *proc) waitOutput(out *syncbuf.Buffer, name, substr string, d time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(out.String(), substr) {
		if time.Now().After(deadline) {
			p.t.Fatalf("pid %d: %q not in %s after %s:\n%s", p.pid(), substr, name, d, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run runs routinely --home home args... to completion and returns stdout, stderr, exit code.
func run(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	return runBin(t, bin, home, args...)
}

// runBin is run with another routinely binary, binary.
func runBin(t *testing.T, binary, home string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--home", home}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = testEnv()
	cmd, err := proctest.StartCmd(t, cmd)
	if err != nil {
		t.Fatalf("start routinely %v: %v", args, err)
	}
	overdue := time.AfterFunc(cmdTimeout, func() { _ = cmd.Process.Kill() })
	err = cmd.Wait()
	if !overdue.Stop() {
		t.Fatalf("routinely %v did not finish in %s; stderr:\n%s", args, cmdTimeout, stderr.String())
	}
	return stdout.String(), stderr.String(), exitCode(err)
}

func testEnv() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ROUTINELY_") {
			env = append(env, kv)
		}
	}
	return env
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}

// statusOut is the part of `status --json` the tests read (README: "status --json").
type statusOut struct {
	Health         string `json:"health"`
	ExitCode       int    `json:"exit_code"`
	StateDir       string `json:"state_dir"`
	Held           bool   `json:"held"`
	Alive          bool   `json:"alive"`
	HeartbeatAgeMS *int64 `json:"heartbeat_age_ms"`
	Owner          *struct {
		Role        string    `json:"role"`
		PID         int       `json:"pid"`
		Host        string    `json:"host"`
		Epoch       uint64    `json:"epoch"`
		State       string    `json:"state"`
		Since       time.Time `json:"since"`
		HeartbeatAt time.Time `json:"heartbeat_at"`
	} `json:"owner"`
	Diagnoses []struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"diagnoses"`
	Routines []routineOut `json:"routines"`
	Hub      *struct {
		Connected    bool   `json:"connected"`
		OfflineLocal bool   `json:"offline_local"`
		Refused      bool   `json:"refused"`
		Error        string `json:"error"`
		Devices      []struct {
			Name  string `json:"name"`
			Alive bool   `json:"alive"`
		} `json:"devices"`
		Drift []struct {
			Routine string `json:"routine"`
		} `json:"drift"`
		Ignored []string `json:"ignored"`
	} `json:"hub"`
	Problems []struct {
		File string `json:"file"`
		Line int    `json:"line"`
		Col  int    `json:"col"`
	} `json:"problems"`
}

type routineOut struct {
	Name      string     `json:"name"`
	Schedule  string     `json:"schedule"`
	Action    string     `json:"action"`
	Next      *time.Time `json:"next"`
	Paused    bool       `json:"paused"`
	PauseNote string     `json:"pause_note"`
	Disabled  string     `json:"disabled"`
	Last      *runOut    `json:"last"`
}

type runOut struct {
	ID         int64     `json:"id"`
	Routine    string    `json:"routine"`
	Slot       time.Time `json:"slot"`
	Trigger    string    `json:"trigger"`
	Epoch      uint64    `json:"epoch"`
	Outcome    string    `json:"outcome"`
	Reason     string    `json:"reason"`
	DurationMS int64     `json:"duration_ms"`
	ExitCode   *int      `json:"exit_code"`
	Attempts   int       `json:"attempts"`
}

// status runs `status --json` and decodes it; the exit code must match the JSON's.
func status(t *testing.T, home string) statusOut {
	t.Helper()
	stdout, stderr, code := run(t, home, "status", "--json")
	var s statusOut
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("status --json (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	if s.ExitCode != code {
		t.Fatalf("status --json says exit_code %d but exited %d", s.ExitCode, code)
	}
	return s
}

// waitStatus polls `status --json` every 100 ms until ok accepts it, and returns it; after
// ownDeadline it fails the test saying what it waited for (want).
func waitStatus(t *testing.T, home, want string, ok func(statusOut) bool) statusOut {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for {
		s := status(t, home)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("status after %s: %+v; want %s", ownDeadline, s, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitOwner polls status until pid owns, and returns that status.
func waitOwner(t *testing.T, home string, pid int) statusOut {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for {
		s := status(t, home)
		if s.Held && s.Owner != nil && s.Owner.PID == pid && s.Owner.State == "owning" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d does not own after %s; last status: %+v", pid, ownDeadline, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ownerRecord reads owner.json directly (a documented diagnostic file), for timing checks that
// a status subprocess would blur.
type ownerRecord struct {
	PID        int       `json:"pid"`
	Epoch      uint64    `json:"epoch"`
	AcquiredAt time.Time `json:"acquired_at"`
}

func readOwnerRecord(dir string) (ownerRecord, bool) {
	var r ownerRecord
	data, err := os.ReadFile(filepath.Join(dir, "owner.json"))
	if err != nil || json.Unmarshal(data, &r) != nil {
		return r, false
	}
	return r, true
}
