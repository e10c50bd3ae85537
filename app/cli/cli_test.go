package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/internal/syncbuf"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testEnv returns an env writing to buffers, with getenv answering from vars.
func testEnv(vars map[string]string) (*env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	e := newEnv(&stdout, &stderr)
	e.getenv = func(k string) string { return vars[k] }
	return e, &stdout, &stderr
}

func TestExitCodeFor(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitError},
		{fmt.Errorf("x: %w", errUsage), ExitUsage},
		{&ownership.OwnedError{}, ExitTempFail},
		{fmt.Errorf("t: %w", ownership.ErrDenied), ExitTempFail},
		{fmt.Errorf("t: %w", ownership.ErrTakeoverTimeout), ExitTempFail},
		{fmt.Errorf("r: %w", errNoOwner), ExitTempFail},
		{&ownership.NotWedgedError{Reason: "x"}, ExitTempFail},
		{&ownership.TakenError{}, ExitTempFail},
		{fmt.Errorf("k: %w", ownership.ErrStillDraining), ExitTempFail},
		{fmt.Errorf("d: %w", ownership.ErrUnsafeDir), ExitPermission},
		{fmt.Errorf("d: %w", os.ErrPermission), ExitPermission},
		{fmt.Errorf("f:1:2: %w", config.ErrConfig), ExitConfig},
		{fmt.Errorf("start: hub: %w: another device", hub.ErrNameTaken), ExitConfig},
		{withCode(ExitUnhealthy, nil), ExitUnhealthy},
		{withCode(ExitNoOwner, errors.New("x")), ExitNoOwner},
	}
	for _, c := range cases {
		if got := exitCodeFor(c.err); got != c.want {
			t.Errorf("exitCodeFor(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestNoguiBuildExplainsDaemon(t *testing.T) {
	e, _, stderr := testEnv(map[string]string{"DISPLAY": ":0"})
	if code := execute(context.Background(), e, nil, nil); code != ExitError {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "built without the desktop app") || !strings.Contains(stderr.String(), "routinely daemon") {
		t.Fatalf("stderr:\n%s", stderr)
	}
}

func TestDesktopNeedsADisplayOnLinux(t *testing.T) {
	called := false
	fake := func(context.Context, paths.Paths, bool, string, *slog.Logger) error { called = true; return nil }
	e, _, stderr := testEnv(nil) // neither DISPLAY nor WAYLAND_DISPLAY
	code := execute(context.Background(), e, []string{"--home", filepath.Join(t.TempDir(), "h")}, fake)
	if runtime.GOOS != "linux" {
		if code != 0 || !called {
			t.Fatalf("exit %d, called %v: only Linux needs $DISPLAY", code, called)
		}
		return
	}
	if code != ExitError || called {
		t.Fatalf("exit %d, desktop called %v; want 1 without starting it", code, called)
	}
	if !strings.Contains(stderr.String(), "No graphical session") || !strings.Contains(stderr.String(), "routinely daemon") {
		t.Fatalf("stderr:\n%s", stderr)
	}
}

func TestDesktopStartsWithProfileAndBackground(t *testing.T) {
	var got paths.Paths
	var bg bool
	fake := func(_ context.Context, p paths.Paths, background bool, _ string, _ *slog.Logger) error {
		got, bg = p, background
		return nil
	}
	home := filepath.Join(t.TempDir(), "h")
	e, _, stderr := testEnv(map[string]string{"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"})
	if code := execute(context.Background(), e, []string{"--home", home, "--background"}, fake); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !bg || !strings.HasSuffix(got.Config, "routines.toml") || got.State == "" {
		t.Fatalf("desktop got %+v background=%v", got, bg)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"status", "extra"}, {"--log-level", "loud", "version"}, {"pause", "x", "--all"}, {"pause", "x", "--until", "yesterday"}, {"daemon", "--kill-wedged"}, {"daemon", "--takeover", "--wait"}} {
		e, _, stderr := testEnv(nil)
		if code := execute(context.Background(), e, append([]string{"--home", filepath.Join(t.TempDir(), "h")}, args...), nil); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr:\n%s", args, code, stderr)
		}
	}
}

func TestParseUntil(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	if u, err := parseUntil("", now); u != nil || err != nil {
		t.Fatalf("empty: %v %v", u, err)
	}
	if u, err := parseUntil("90m", now); err != nil || !u.Equal(now.Add(90*time.Minute)) {
		t.Fatalf("90m: %v %v", u, err)
	}
	if u, err := parseUntil("2026-12-01T08:00:00+01:00", now); err != nil || u.UTC().Hour() != 7 {
		t.Fatalf("rfc3339: %v %v", u, err)
	}
	for _, bad := range []string{"-1h", "0s", "2026-01-01T00:00:00Z", "tomorrow"} {
		if _, err := parseUntil(bad, now); !errors.Is(err, errUsage) {
			t.Errorf("%q: err %v, want usage", bad, err)
		}
	}
}

func TestTakeoverMessages(t *testing.T) {
	desk := &ownership.Record{Role: ownership.RoleDesktop, PID: 42}
	daemon := &ownership.Record{Role: ownership.RoleDaemon, PID: 43}
	o := daemonOptions{timeout: time.Minute}
	if m := takeoverMessage(ownership.TakeoverProgress{Owner: desk, Decision: ownership.DecisionPending}, o); m != "waiting for approval in the Routinely app…" {
		t.Errorf("pending desktop: %q", m)
	}
	if m := takeoverMessage(ownership.TakeoverProgress{Owner: daemon, Decision: ownership.DecisionPending}, o); !strings.Contains(m, "waiting for approval") || !strings.Contains(m, "pid 43") {
		t.Errorf("pending daemon: %q", m)
	}
	if m := takeoverMessage(ownership.TakeoverProgress{Owner: daemon}, o); !strings.Contains(m, "asking") || !strings.Contains(m, "1m0s") {
		t.Errorf("asking: %q", m)
	}
}

func TestProgressPrintsChangesWithoutATerminal(t *testing.T) {
	var buf syncbuf.Buffer
	p := startProgress(context.Background(), &buf)
	p.Set("asking")
	p.Set("asking")
	p.Set("waiting")
	p.Stop()
	if got := buf.String(); got != "asking\nwaiting\n" {
		t.Fatalf("progress output %q", got)
	}
}

func TestFmtDur(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond: "850ms", 12 * time.Second: "12s", 200 * time.Second: "3m20s",
		125 * time.Minute: "2h5m", 76 * time.Hour: "3d4h",
	} {
		if got := fmtDur(d); got != want {
			t.Errorf("fmtDur(%s) = %q, want %q", d, got, want)
		}
	}
}

// validate in-process: a broken file exits 78 with file:line:col, a good one 0.
func TestValidateInProcess(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[[routine]]\nname = \"x\"\nevery = [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, _, stderr := testEnv(nil)
	if code := execute(context.Background(), e, []string{"validate", bad}, nil); code != ExitConfig {
		t.Fatalf("exit %d, want 78: %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), bad+":") {
		t.Fatalf("stderr does not name %s:LINE:COL:\n%s", bad, stderr)
	}
	examples := filepath.Join("..", "..", "examples", "routines.toml")
	e, stdout, stderr := testEnv(nil)
	if code := execute(context.Background(), e, []string{"validate", examples}, nil); code != 0 {
		t.Fatalf("examples: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "all valid") {
		t.Fatalf("stdout: %s", stdout)
	}
}

// The daemon's lifecycle in-process (with -race): it owns, and cancelling its context (what
// SIGINT/SIGTERM do) stops the engine, releases and returns nil.
func TestDaemonStopsAndReleasesOnCancel(t *testing.T) {
	home := filepath.Join(t.TempDir(), "h")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "[[routine]]\nname = \"n\"\nevery = \"1h\"\nnotify = { title = \"t\" }\n"
	if err := os.WriteFile(filepath.Join(home, "routines.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e, _, stderr := testEnv(nil)
	e.home = home
	var logs syncbuf.Buffer
	e.logger = slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runDaemon(ctx, e, daemonOptions{timeout: time.Minute, onTakeover: "allow"}) }()

	p, err := paths.Resolve(home)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := ownership.Inspect(p.State)
		if err == nil && st.Held && st.Record != nil && st.Record.PID == os.Getpid() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon does not own: %+v %v\nlogs:\n%s", st, err, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runDaemon: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runDaemon did not return after cancel")
	}
	if st, _ := ownership.Inspect(p.State); st.Held {
		t.Fatalf("still held after stop: %+v", st)
	}
	if !strings.Contains(stderr.String(), "released") {
		t.Fatalf("stderr: %s", stderr.String())
	}
}

func TestWantsDesktop(t *testing.T) {
	for args, want := range map[string]bool{
		"": true, "--background": true, "--home /x": true, "--home /x --background": true,
		"status": false, "--home /x daemon --wait": false, "--help": false, "--version": false, "help": false,
	} {
		if got := WantsDesktop(strings.Fields(args)); got != want {
			t.Errorf("WantsDesktop(%q) = %v, want %v", args, got, want)
		}
	}
}

// The daemon's startup line names the epoch, the routines and the next run (not a paused one).
func TestStartupLine(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.Local)
	soon, later, sooner := now.Add(30*time.Second), now.Add(time.Hour), now.Add(5*time.Second)
	states := []scheduler.RoutineState{
		{Name: "hourly", Next: &later},
		{Name: "heartbeat", Next: &soon},
		{Name: "paused-one", Next: &sooner, Paused: true},
		{Name: "broken", Disabled: "routines.toml:9:1: bad"},
	}
	got := startupLine(states, 7, "/p/routines.toml", now)
	want := "Owning the routines (epoch 7): 4 routines from /p/routines.toml (1 paused, 1 disabled, see 'routinely validate'). Next run: heartbeat at 10:00:30 (in 30s). Ctrl-C stops."
	if got != want {
		t.Fatalf("startupLine =\n%s\nwant\n%s", got, want)
	}
	if got := startupLine(states[2:3], 1, "/p/routines.toml", now); !strings.Contains(got, "1 routine from") || !strings.Contains(got, "Nothing is scheduled") {
		t.Fatalf("all paused: %s", got)
	}
}

// status names the hub without the password of its URL, in text and --json.
func TestHubStatusHidesTheURLPassword(t *testing.T) {
	cfg := &config.Config{Hub: &config.Hub{URL: "nats://dev:s3cretPW@hub.lan:4222", Device: "laptop"}}
	h, _ := hubStatus(paths.Paths{State: t.TempDir()}, cfg, ownership.Status{}, time.Now())
	var out bytes.Buffer
	printHub(&out, h, time.Now())
	if h.URL != "nats://dev:xxxxx@hub.lan:4222" || strings.Contains(out.String(), "s3cretPW") {
		t.Fatalf("status shows the hub as %q:\n%s", h.URL, out.String())
	}
}

// A stamp from another clock that runs a little ahead (a device's last seen, the owner's start)
// reads "0s ago", never as if it were to come.
func TestStatusShowsAStampAheadAsJustNow(t *testing.T) {
	now := time.Now()
	ahead := now.Add(3 * time.Second)
	var out bytes.Buffer
	printHub(&out, &jsonHub{URL: "nats://hub.lan:4222", Device: "a", Connected: true, UpdatedAt: &now,
		Devices: []jsonHubDevice{{Name: "b", Alive: true, LastSeen: &ahead}}}, now)
	if !strings.Contains(out.String(), "(0s ago)") || strings.Contains(out.String(), "(in ") {
		t.Errorf("a device seen by a clock 3 s ahead:\n%s", out.String())
	}
	if got := describeOwner(&ownership.Record{AcquiredAt: ahead}, now); !strings.Contains(got, "(0s ago)") {
		t.Errorf("an owner started by a clock 3 s ahead: %s", got)
	}
}
