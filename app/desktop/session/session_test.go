package session

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/routinely/routinely/app/autostart"
	"github.com/routinely/routinely/app/owning"
	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/internal/syncbuf"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// The test binary re-executes itself as a challenger (a daemon asking to take over), so the
// session is tested against another real process.
const (
	envHelper  = "ROUTINELY_SESSION_TEST_CHALLENGER"
	envDir     = "ROUTINELY_SESSION_TEST_DIR"
	envTimeout = "ROUTINELY_SESSION_TEST_TIMEOUT"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envHelper) {
	case "":
	case "hold":
		os.Exit(hold())
	default:
		os.Exit(challenge())
	}
	os.Exit(m.Run())
}

// challenge asks for the routines, prints the outcome, and on success holds them until killed.
func challenge() int {
	timeout, _ := time.ParseDuration(os.Getenv(envTimeout))
	ctx := context.Background()
	h, err := ownership.Takeover(ctx, ownership.Options{Dir: os.Getenv(envDir), Role: ownership.RoleDaemon, Version: "test"},
		ownership.TakeoverOptions{Timeout: timeout})
	switch {
	case errors.Is(err, ownership.ErrDenied):
		fmt.Println("denied")
	case errors.Is(err, ownership.ErrTakeoverTimeout):
		fmt.Println("timeout")
	case err != nil:
		fmt.Println("error:", err)
	default:
		fmt.Println("owned")
		<-h.Lost() // hold until killed
	}
	return 0
}

// hold owns as a daemon that allows takeovers (`routinely daemon`'s default) until it loses.
func hold() int {
	h, err := ownership.Acquire(context.Background(), ownership.Options{Dir: os.Getenv(envDir),
		Role: ownership.RoleDaemon, Version: "test", Policy: ownership.PolicyAllow, HeartbeatInterval: 200 * time.Millisecond})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("owning")
	<-h.Lost()
	fmt.Println("lost")
	return 0
}

func startChallenger(t *testing.T, dir string, timeout time.Duration) (*exec.Cmd, <-chan string) {
	return startHelper(t, "challenge", dir, timeout)
}

func startHelper(t *testing.T, mode, dir string, timeout time.Duration) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envDir+"="+dir, envTimeout+"="+timeout.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
		close(lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, lines
}

func line(t *testing.T, lines <-chan string, within time.Duration) string {
	t.Helper()
	select {
	case l := <-lines:
		return l
	case <-time.After(within):
		t.Fatalf("challenger said nothing within %s", within)
	}
	return ""
}

// newSession starts a real session (real ownership, owning.Serve and scheduler) on a fresh
// profile with one quiet routine, and stops it at the end of the test.
func newSession(t *testing.T) (*Session, paths.Paths) {
	t.Helper()
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	return newSessionAt(t, p)
}

func newSessionAt(t *testing.T, p paths.Paths, tweak ...func(*Options)) (*Session, paths.Paths) {
	t.Helper()
	toml := "[[routine]]\nname = \"quiet\"\nevery = \"1h\"\nrun = [\"true\"]\n"
	if _, err := os.Stat(p.Config); errors.Is(err, os.ErrNotExist) { // a test may have written its own
		if err := os.WriteFile(p.Config, []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Options{Paths: p, Version: "test", Notifier: owning.LogNotifier{}, Tick: 100 * time.Millisecond,
		Executable: "/usr/bin/routinely-test", Logger: testLogger(t),
		Autostart: autostart.NewXDG(filepath.Join(t.TempDir(), "xdg-config"))})
	for _, f := range tweak {
		f(&s.opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("session did not stop within 20 s")
		}
	})
	return s, p
}

var testLogs sync.Map // *testing.T → *syncbuf.Buffer

// testLogger logs to a buffer that logsOf returns (and to the test log on failure).
func testLogger(t *testing.T) *slog.Logger {
	buf := &syncbuf.Buffer{}
	testLogs.Store(t, buf)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("session log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func logsOf(t *testing.T) string {
	if b, ok := testLogs.Load(t); ok {
		return b.(*syncbuf.Buffer).String()
	}
	return ""
}

// waitFor polls the session's snapshot until ok holds.
func waitFor(t *testing.T, s *Session, within time.Duration, what string, ok func(State) bool) State {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st := s.Snapshot()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (mode %d, owner %+v, notice %q)", what, within, st.Mode, st.Owner.Record, st.Notice)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ownsOne(st State) bool {
	return st.Mode == ModeOwning && st.Self != nil && len(st.Routines) == 1
}

func TestApprovedTakeoverThenOwnsAgainWhenDaemonDies(t *testing.T) {
	s, p := newSession(t)
	waitFor(t, s, 10*time.Second, "owning at start", ownsOne)

	cmd, lines := startChallenger(t, p.State, 30*time.Second)
	st := waitFor(t, s, 5*time.Second, "takeover prompt", func(st State) bool { return st.Pending != nil })
	if st.Pending.Requester.PID != cmd.Process.Pid || st.Pending.Requester.Role != ownership.RoleDaemon {
		t.Fatalf("pending request from %+v, want the daemon pid %d", st.Pending.Requester, cmd.Process.Pid)
	}
	if err := s.Decide(st.Pending.ID, true); err != nil {
		t.Fatal(err)
	}
	if got := line(t, lines, 10*time.Second); got != "owned" {
		t.Fatalf("challenger: %q, want owned", got)
	}
	waitFor(t, s, 5*time.Second, "standby showing the daemon", func(st State) bool {
		return st.Mode == ModeStandby && st.Owner.Record != nil && st.Owner.Record.PID == cmd.Process.Pid && st.Pending == nil
	})

	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	killed := time.Now()
	waitFor(t, s, 2*time.Second, "owning again after the daemon died", func(st State) bool {
		return st.Mode == ModeOwning && st.Self != nil && st.Self.PID == os.Getpid()
	})
	t.Logf("owned again %s after SIGKILL", time.Since(killed).Round(time.Millisecond))
	waitFor(t, s, 10*time.Second, "routines running again", ownsOne)
	// Snapshots taken while the engine stopped must not have read through its closed journal.
	if l := logsOf(t); strings.Contains(l, "database is closed") {
		t.Errorf("a snapshot read the stopped engine's closed journal:\n%s", l)
	}
}

// Snapshots during a handover keep showing the routines (read through the observer once the
// engine stops) and never read the stopped engine's closed journal.
func TestSnapshotsDuringHandoverKeepTheRoutines(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s, p := newSession(t)
			waitFor(t, s, 10*time.Second, "owning at start", ownsOne)
			stop := make(chan struct{})
			var bad []string
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // a snapshot as often as possible, as a busy refresh loop would
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if st := s.Snapshot(); len(st.Routines) != 1 && st.ConfigErr == "" {
						bad = append(bad, fmt.Sprintf("mode %d: %d routines, notice %q", st.Mode, len(st.Routines), st.Notice))
					}
				}
			}()
			cmd, lines := startChallenger(t, p.State, 30*time.Second)
			st := waitFor(t, s, 5*time.Second, "takeover prompt", func(st State) bool { return st.Pending != nil })
			if err := s.Decide(st.Pending.ID, true); err != nil {
				t.Fatal(err)
			}
			if got := line(t, lines, 10*time.Second); got != "owned" {
				t.Fatalf("challenger: %q, want owned", got)
			}
			waitFor(t, s, 5*time.Second, "standby", func(st State) bool { return st.Mode == ModeStandby })
			close(stop)
			wg.Wait()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if len(bad) > 0 {
				t.Errorf("%d snapshots without the routine during the handover, e.g. %s", len(bad), bad[0])
			}
			if l := logsOf(t); strings.Contains(l, "database is closed") {
				t.Errorf("a snapshot read the stopped engine's closed journal:\n%s", l)
			}
		})
	}
}

// An app on a profile of its own (--home, ROUTINELY_HOME) writes that profile into the login
// item: at login the same profile starts.
func TestStartAtLoginStartsThisProfile(t *testing.T) {
	s, p := newSession(t)
	s.opts.Executable = os.Args[0]
	if p.Home == "" {
		t.Fatal("the test profile was not chosen with --home")
	}
	if err := s.SetStartAtLogin(true); err != nil {
		t.Fatal(err)
	}
	cur, err := s.opts.Autostart.Current(os.Args[0])
	if err != nil || cur.Home != p.Home || !cur.PointsHere || !s.Snapshot().AutoStart {
		t.Fatalf("login item %+v, %v; want it to start --home %s", cur, err, p.Home)
	}
	data, err := os.ReadFile(cur.Location)
	if err != nil || !strings.Contains(string(data), "--background --home "+p.Home) {
		t.Fatalf("login item file %s: %v\n%s", cur.Location, err, data)
	}
}

// Start at login writes and removes the login item, and the snapshot follows it.
func TestStartAtLogin(t *testing.T) {
	s, _ := newSession(t)
	s.opts.Executable = os.Args[0] // a real file: the login item resolves it
	if st := s.Snapshot(); st.AutoStart {
		t.Fatal("login item on before it was asked for")
	}
	if err := s.SetStartAtLogin(true); err != nil {
		t.Fatal(err)
	}
	cur, err := s.opts.Autostart.Current(os.Args[0])
	if err != nil || cur.State != autostart.Enabled || !cur.PointsHere {
		t.Fatalf("after enabling: %+v, %v", cur, err)
	}
	if _, err := os.Stat(cur.Location); err != nil {
		t.Fatalf("no login item file: %v", err)
	}
	if !s.Snapshot().AutoStart {
		t.Error("snapshot says the login item is off after enabling it")
	}
	if err := s.SetStartAtLogin(false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cur.Location); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("login item still there after disabling: %v", err)
	}
	if s.Snapshot().AutoStart {
		t.Error("snapshot says the login item is on after disabling it")
	}
}

// At start-up the app points an enabled login item that starts another binary at itself (the
// binary was moved or updated), and leaves a disabled one alone.
func TestLoginItemFollowsTheBinaryAtStartup(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "elsewhere")) // the test binary is not a "go run" build here
	dir := t.TempDir()
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	m := autostart.NewXDG(dir)
	if _, err := m.WithHome(p.Home).Enable("/bin/true"); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Paths: p, Executable: os.Args[0], Autostart: m, Logger: testLogger(t)})
	defer s.obs.close()
	if !s.Snapshot().AutoStart {
		t.Error("the login item does not start this binary after start-up")
	}
	if cur, _ := m.WithHome(p.Home).Current(os.Args[0]); !cur.PointsHere || cur.Home != p.Home {
		t.Errorf("login item %+v, want it to start %s on %s", cur, os.Args[0], p.Home)
	}

	if _, err := m.Disable(); err != nil {
		t.Fatal(err)
	}
	s2 := New(Options{Paths: p, Executable: os.Args[0], Autostart: m, Logger: testLogger(t)})
	defer s2.obs.close()
	if cur, _ := m.Current(os.Args[0]); cur.State != autostart.Disabled || s2.Snapshot().AutoStart {
		t.Errorf("start-up turned a disabled login item on: %+v", cur)
	}
}

func TestUnansweredRequestIsDeniedAtDeadline(t *testing.T) {
	s, p := newSession(t)
	waitFor(t, s, 10*time.Second, "owning at start", ownsOne)
	_, lines := startChallenger(t, p.State, 4*time.Second)
	waitFor(t, s, 4*time.Second, "takeover prompt", func(st State) bool { return st.Pending != nil })
	got := line(t, lines, 10*time.Second)
	if got != "denied" && got != "timeout" {
		t.Fatalf("challenger: %q, want it refused after the deadline", got)
	}
	st := waitFor(t, s, 2*time.Second, "prompt gone after the deadline", func(st State) bool { return st.Pending == nil })
	if !ownsOne(st) {
		t.Errorf("the app gave up the routines without an answer (mode %d)", st.Mode)
	}
}

func TestPolicyAlwaysDenyIsSavedAndApplied(t *testing.T) {
	s, p := newSession(t)
	waitFor(t, s, 10*time.Second, "owning at start", ownsOne)
	if err := s.SetPolicy(ownership.PolicyDeny); err != nil {
		t.Fatal(err)
	}
	if saved, err := LoadSettings(p.State); err != nil || saved.TakeoverPolicy != ownership.PolicyDeny {
		t.Fatalf("saved settings %+v, %v; want deny", saved, err)
	}
	_, lines := startChallenger(t, p.State, 20*time.Second)
	if got := line(t, lines, 10*time.Second); got != "denied" {
		t.Fatalf("challenger: %q, want denied by policy", got)
	}
	if st := s.Snapshot(); !ownsOne(st) || st.Pending != nil || st.Policy != ownership.PolicyDeny {
		t.Errorf("after a policy denial: mode %d pending %v policy %q", st.Mode, st.Pending, st.Policy)
	}
}

func TestRunNowAndPauseGoThroughTheJournal(t *testing.T) {
	s, _ := newSession(t)
	waitFor(t, s, 10*time.Second, "owning at start", ownsOne)
	if err := s.SetPaused("", true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, 3*time.Second, "routine paused", func(st State) bool { return len(st.Routines) == 1 && st.Routines[0].Paused })
	if err := s.SetPaused("", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, 3*time.Second, "routine resumed", func(st State) bool { return len(st.Routines) == 1 && !st.Routines[0].Paused })
	if err := s.RunNow("quiet"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, 5*time.Second, "manual run recorded", func(st State) bool {
		return len(st.Routines) == 1 && st.Routines[0].Last != nil && st.Routines[0].Last.Outcome == "success"
	})
	runs, err := s.History("quiet", 10)
	if err != nil || len(runs) == 0 {
		t.Fatalf("history: %v, %v", runs, err)
	}
	if _, err := s.Output(runs[0].ID); err != nil {
		t.Errorf("output of run %d: %v", runs[0].ID, err)
	}
}

func TestStandbyThenTakeBack(t *testing.T) {
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	daemon, lines := startHelper(t, "hold", p.State, 0)
	if got := line(t, lines, 10*time.Second); got != "owning" {
		t.Fatalf("daemon: %q", got)
	}
	s, _ := newSessionAt(t, p)
	st := waitFor(t, s, 5*time.Second, "standby showing the daemon", func(st State) bool {
		return st.Mode == ModeStandby && st.Owner.Held && st.Owner.Record != nil && st.Owner.Record.PID == daemon.Process.Pid
	})
	if st.Self != nil {
		t.Error("standby state carries an own record")
	}
	s.TakeBack()
	if got := line(t, lines, 10*time.Second); got != "lost" {
		t.Fatalf("daemon: %q, want it to hand over", got)
	}
	waitFor(t, s, 5*time.Second, "owning after Take back", ownsOne)
}

// The snapshot carries the routines file's validation errors with file:line:col, for the
// settings to list: a file broken while the app owns (the engine keeps the last good routines),
// and one broken at start-up.
func TestBrokenConfigShowsWhereInSettings(t *testing.T) {
	s, p := newSession(t)
	waitFor(t, s, 10*time.Second, "owning at start", ownsOne)
	// The snapshot shows the routines from the journal before the engine has started: wait for
	// the engine itself (and so its watch on the file) before breaking the file.
	waitFor(t, s, 10*time.Second, "engine running", func(State) bool {
		s.engMu.RLock()
		defer s.engMu.RUnlock()
		return s.engine != nil
	})
	broken := "[[routine]]\nname = \"quiet\"\nevery = \"1h\"\nrun = [\"true\"\n"
	if err := os.WriteFile(p.Config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	where := p.Config + ":"
	st := waitFor(t, s, 10*time.Second, "the parse error in the settings", func(st State) bool {
		return strings.Contains(problemsText(st), where)
	})
	if len(st.Routines) != 1 {
		t.Errorf("the last good routines are not shown while the file is broken: %d", len(st.Routines))
	}
	t.Logf("owning: %s", problemsText(st))

	p2, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p2.Config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, _ := newSessionAt(t, p2)
	st = waitFor(t, s2, 10*time.Second, "the parse error at start-up in the settings", func(st State) bool {
		return strings.Contains(problemsText(st), p2.Config+":")
	})
	t.Logf("broken at start: %s", problemsText(st))
}

// problemsText is every problem st carries, one a line: the whole-file error, then each
// validation problem as "file:line:col: message".
func problemsText(st State) string {
	lines := []string{st.ConfigErr}
	for _, p := range st.Problems {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}

// A daemon that owns and is SIGSTOPped while the app stands by: Take back says at once that it
// cannot answer (no 60 s wait); the snapshot counts down to when it may be ended, then offers it;
// a pid other than the stuck owner's is refused; End the stuck owner ends it (SIGKILL: a stopped
// process cannot act on SIGTERM) and the app owns.
func TestStuckOwnerEndedFromTheWindow(t *testing.T) {
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	daemon, lines := startHelper(t, "hold", p.State, 0)
	if got := line(t, lines, 10*time.Second); got != "owning" {
		t.Fatalf("daemon: %q", got)
	}
	const threshold = 3 * time.Second
	s, _ := newSessionAt(t, p, func(o *Options) { o.WedgeThreshold = threshold })
	pid := daemon.Process.Pid
	st := waitFor(t, s, 5*time.Second, "standby showing the daemon", func(st State) bool {
		return st.Mode == ModeStandby && st.Owner.Record != nil && st.Owner.Record.PID == pid
	})
	if st.Stuck != nil {
		t.Fatalf("a heartbeating owner is offered as stuck: %+v", st.Stuck)
	}
	if err := s.EndStuckOwner(pid); !errors.Is(err, ErrNotStuck) {
		t.Fatalf("EndStuckOwner on a healthy owner: %v, want ErrNotStuck", err)
	}
	if err := daemon.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer daemon.Process.Signal(syscall.SIGCONT)
	st = waitFor(t, s, 5*time.Second, "the stuck owner counted down", func(st State) bool {
		return st.Stuck != nil && st.Stuck.PID == pid && st.Stuck.EndableIn > 0
	})
	if st.Stuck.Refused != "" || st.Stuck.EndableIn > threshold {
		t.Errorf("stuck owner %+v, want endable within the threshold %s", st.Stuck, threshold)
	}

	asked := time.Now()
	s.TakeBack()
	st = waitFor(t, s, 5*time.Second, "Take back failing at once", func(st State) bool {
		return st.Mode == ModeStandby && strings.Contains(st.Notice, "cannot hand the routines back")
	})
	if took := time.Since(asked); took > 3*time.Second {
		t.Errorf("Take back against a stuck owner took %s to fail", took)
	}

	waitFor(t, s, 10*time.Second, "the stuck owner offered to end", func(st State) bool {
		return st.Stuck != nil && st.Stuck.EndableIn == 0 && st.Stuck.Refused == ""
	})
	if err := s.EndStuckOwner(pid + 1); !errors.Is(err, ErrNotStuck) {
		t.Fatalf("EndStuckOwner naming another pid: %v, want ErrNotStuck", err)
	}
	if err := s.EndStuckOwner(pid); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, 20*time.Second, "owning after ending the stuck owner", ownsOne)
	exited := make(chan struct{})
	go func() { _ = daemon.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the stuck daemon still runs after the app owns")
	}
	if ws, ok := daemon.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("daemon ended by %v, want SIGKILL", daemon.ProcessState)
	}
}

// While routines.toml does not parse, the snapshot carries the last good routines, says so
// (LastGood) and where the file's error is — from the engine while this app owns, and from the
// journal's record for an observer (the app in standby).
func TestBrokenConfigShowsTheLastGoodSet(t *testing.T) {
	s, p := newSession(t)
	waitFor(t, s, 10*time.Second, "engine running", func(State) bool {
		s.engMu.RLock()
		defer s.engMu.RUnlock()
		return s.engine != nil
	})
	broken := "[[routine]]\nname = \"quiet\"\nevery = \"1h\"\nrun = [\"true\"]\n[[routine\n"
	if err := os.WriteFile(p.Config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, 10*time.Second, "the last good set with the error", func(st State) bool {
		return st.LastGood && st.ConfigProblem != nil
	})
	if st.ConfigProblem.Line != 5 || len(st.Routines) != 1 || st.Routines[0].Name != "quiet" || !strings.Contains(st.ConfigErr, ":5:") {
		t.Errorf("owning: problem %+v, routines %v, err %q; want line 5 and the last good routine", st.ConfigProblem, st.Routines, st.ConfigErr)
	}

	o := newObserver(p)
	defer o.close()
	v := o.routines(time.Now())
	if !v.lastGood || v.broken == nil || v.broken.Line != 5 || len(v.states) != 1 || v.states[0].Name != "quiet" {
		t.Errorf("observer: %+v; want the last good routine and the error at line 5", v)
	}
}

// publishes counts the snapshots a session publishes and keeps the newest.
type publishes struct {
	mu     sync.Mutex
	n      int
	latest State
}

func (p *publishes) publish(st State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.latest = st
}

func (p *publishes) get() (int, State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, p.latest
}

// ranOnce reports whether st shows routine idle after a run that succeeded.
func ranOnce(st State, routine string) bool {
	for _, r := range st.Routines {
		if r.Name == routine {
			return !r.Running && r.Last != nil && r.Last.Outcome == journal.OutcomeSuccess
		}
	}
	return false
}

// countOver returns how many snapshots were published during d.
func (p *publishes) countOver(d time.Duration) int {
	n0, _ := p.get()
	time.Sleep(d)
	n1, _ := p.get()
	return n1 - n0
}

// While the app owns, the state is published when it changes (the engine tells of a run
// starting and ending) and otherwise only every OwningTick, window or not: nothing shown then
// counts seconds.
func TestAnOwningAppIsRefreshedOnChangeOnly(t *testing.T) {
	var pubs publishes
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSessionAt(t, p, func(o *Options) {
		o.Tick, o.OwningTick, o.Publish = 50*time.Millisecond, time.Hour, pubs.publish
	})
	deadline := time.Now().Add(10 * time.Second)
	for _, st := pubs.get(); !ownsOne(st); _, st = pubs.get() {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot of the app owning within 10 s (last: mode %d)", st.Mode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the start's last pokes
	// Every 50 ms would be 30 in 1.5 s.
	if n := pubs.countOver(1500 * time.Millisecond); n > 2 {
		t.Errorf("owning: %d snapshots in 1.5 s, want the owning tick (1 h) and none meanwhile", n)
	}
	if _, st := pubs.get(); st.Owner.Record == nil || st.Owner.Record.PID != os.Getpid() || !st.Owner.Held || len(st.Owner.Diagnoses) != 0 {
		t.Errorf("the app shows itself as %+v, want a healthy owner with its own pid", st.Owner)
	}

	// A run's end reaches the published state at once: RunNow's own poke comes before the
	// engine has even seen the request, so only the engine's word can publish its outcome.
	if err := s.RunNow("quiet"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for _, st := pubs.get(); !ranOnce(st, "quiet"); _, st = pubs.get() {
		if time.Now().After(deadline) {
			t.Fatalf("the run's outcome was not published within 10 s (last: %+v)", st.Routines)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A takeover request waiting for an answer is refreshed every Tick, so its countdown moves
	// and its notification is withdrawn when it expires.
	_, lines := startChallenger(t, p.State, 3*time.Second)
	waitFor(t, s, 4*time.Second, "takeover prompt", func(st State) bool { return st.Pending != nil })
	if n := pubs.countOver(500 * time.Millisecond); n < 5 {
		t.Errorf("with a request pending: %d snapshots in 0.5 s, want one every 50 ms", n)
	}
	if got := line(t, lines, 10*time.Second); got != "denied" && got != "timeout" {
		t.Fatalf("challenger: %q, want it refused after the deadline", got)
	}
	deadline = time.Now().Add(3 * time.Second)
	for _, st := pubs.get(); st.Pending != nil; _, st = pubs.get() {
		if time.Now().After(deadline) {
			t.Fatal("the published state still shows the request 3 s after it expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A journal.db of another program keeps the app from owning, and the window says why; once the
// person moves it aside, as the message says, the app owns and runs the routines without a
// restart.
func TestAForeignJournalMovedAsideLetsTheAppOwn(t *testing.T) {
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", mustURI(t, p.Journal))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ := newSessionAt(t, p)
	waitFor(t, s, 10*time.Second, "the refusal of the foreign journal", func(st State) bool {
		return strings.Contains(st.Notice, "Cannot take ownership") && strings.Contains(st.Notice, "not a Routinely journal")
	})
	if err := os.Rename(p.Journal, p.Journal+".bad"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, 10*time.Second, "owning once the journal was moved aside", ownsOne)
}

// mustURI is the URI the journal itself opens path by (journal.URI), or the test fails.
func mustURI(t *testing.T, path string) string {
	t.Helper()
	u, err := journal.URI(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
