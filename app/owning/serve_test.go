package owning

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/internal/proctest"
	"github.com/routinely/routinely/internal/syncbuf"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// envChallenger makes the test binary a challenger process (`routinely daemon --takeover` in
// miniature) for the profile home it names: the ownership guard refuses a second owner in the
// same process, and the takeover must cross processes anyway.
const envChallenger = "ROUTINELY_CORE_TEST_CHALLENGER"

func TestMain(m *testing.M) {
	if home := os.Getenv(envChallenger); home != "" {
		os.Exit(runChallenger(home))
	}
	goleak.VerifyTestMain(m)
}

// runChallenger takes over the profile at home, prints "owned EPOCH" and holds the routines until
// its stdin closes.
func runChallenger(home string) int {
	p, err := paths.Resolve(home)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := Options(p, ownership.RoleDaemon, "test", ownership.PolicyAllow, slog.New(slog.DiscardHandler))
	h, err := ownership.Takeover(ctx, opts, ownership.TakeoverOptions{Timeout: 30 * time.Second, Reason: "owning test"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("owned", h.Epoch())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = h.Release(ctx)
	return 0
}

func profile(t *testing.T, config string) paths.Paths {
	t.Helper()
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Config, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func acquire(t *testing.T, p paths.Paths) *ownership.Handle {
	t.Helper()
	h, err := ownership.Acquire(context.Background(), Options(p, ownership.RoleDaemon, "test", ownership.PolicyAllow, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Serve starts the engine, reports it, and on cancel stops it and releases the guard.
func TestServeStopsAndReleasesOnCancel(t *testing.T) {
	p := profile(t, "[[routine]]\nname = \"n\"\nevery = \"1h\"\nnotify = { title = \"t\" }\n")
	h := acquire(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan []scheduler.RoutineState, 1)
	atStop := make(chan []scheduler.RoutineState, 1)
	var log syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, h, p, LogNotifier{}, slog.New(slog.NewTextHandler(&log, nil)), Hooks{Started: func(e *scheduler.Engine) func() {
			started <- e.Routines()
			// The engine must still be readable (its journal open) when Serve says it stopped.
			return func() { atStop <- e.Routines() }
		}})
	}()
	select {
	case rs := <-started:
		if len(rs) != 1 || rs[0].Name != "n" {
			t.Fatalf("engine routines = %+v", rs)
		}
	case err := <-done:
		t.Fatalf("Serve returned before starting: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("engine did not start")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	select {
	case rs := <-atStop:
		if len(rs) != 1 || strings.Contains(log.String(), "database is closed") {
			t.Fatalf("engine read at stop: %+v; log:\n%s", rs, log.String())
		}
	default:
		t.Fatal("Serve returned without calling the stopped func")
	}
	st, err := ownership.Inspect(p.State)
	if err != nil || st.Held {
		t.Fatalf("after Serve: held=%v err=%v", st.Held, err)
	}
	if e, err := JournalEpoch(p); err != nil || e != h.Epoch() {
		t.Fatalf("journal epoch %d, %v; want %d", e, err, h.Epoch())
	}
}

// An approved takeover ends Serve by itself (the handle drained and released): it stops the
// engine, calls the stopped hook before the journal closes and returns nil, and the challenger
// owns with the next epoch. The challenger is this test binary re-executed (see envChallenger).
func TestServeReturnsWhenTakenOver(t *testing.T) {
	p := profile(t, "[[routine]]\nname = \"n\"\nevery = \"1h\"\nnotify = { title = \"t\" }\n")
	h := acquire(t, p) // PolicyAllow: the owner approves by itself
	started, stopped := make(chan struct{}), make(chan bool, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), h, p, LogNotifier{}, slog.New(slog.DiscardHandler), Hooks{Started: func(e *scheduler.Engine) func() {
			close(started)
			return func() { _, err := JournalEpoch(p); stopped <- err == nil && len(e.Routines()) == 1 }
		}})
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("Serve returned before starting: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("engine did not start")
	}
	cmd, stdin, out := startChallenger(t, filepath.Dir(p.Config))
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after the takeover: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its handle was taken over")
	}
	select {
	case ok := <-stopped:
		if !ok {
			t.Error("the stopped hook could not read the engine and journal")
		}
	default:
		t.Error("Serve returned without calling the stopped hook")
	}
	select {
	case got := <-line:
		if want := fmt.Sprint("owned ", h.Epoch()+1); got != want {
			t.Errorf("challenger said %q, want %q", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the challenger said nothing")
	}
	if st, err := ownership.Inspect(p.State); err != nil || !st.Held || st.Record.PID != cmd.Process.Pid || st.Record.Epoch != h.Epoch()+1 {
		t.Errorf("after the takeover: %+v, %v; want the challenger (pid %d) holding epoch %d", st, err, cmd.Process.Pid, h.Epoch()+1)
	}
}

// A routines.toml that does not parse: Serve fails with ErrConfig and has released the guard.
func TestServeBrokenConfigReleases(t *testing.T) {
	p := profile(t, "[[routine]\nname = ")
	h := acquire(t, p)
	err := Serve(context.Background(), h, p, LogNotifier{}, slog.New(slog.DiscardHandler), Hooks{})
	if !errors.Is(err, config.ErrConfig) {
		t.Fatalf("Serve = %v, want ErrConfig", err)
	}
	if st, _ := ownership.Inspect(p.State); st.Held {
		t.Fatal("guard still held after a failed start")
	}
}

func TestJournalEpochWithoutJournal(t *testing.T) {
	p := profile(t, "")
	if e, err := JournalEpoch(p); e != 0 || err != nil {
		t.Fatalf("JournalEpoch = %d, %v; want 0, nil", e, err)
	}
}

func TestLogNotifierLogs(t *testing.T) {
	var buf syncbuf.Buffer
	if err := (LogNotifier{Logger: slog.New(slog.NewTextHandler(&buf, nil))}).Notify("Good morning", "coffee"); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); !strings.Contains(s, "Good morning") || !strings.Contains(s, "coffee") {
		t.Fatalf("log = %q", s)
	}
}

// A takeover approved before the routines have started (the owner had nothing in flight, so it
// let go at once) leaves this owner's start fenced by the successor's epoch. That is a handover:
// Serve returns nil, not "start routines: … fenced" (which made a daemon exit 1).
func TestServeFencedByATakeoverDuringStartIsAHandover(t *testing.T) {
	p := profile(t, "[[routine]]\nname = \"n\"\nevery = \"1h\"\nnotify = { title = \"t\" }\n")
	h := acquire(t, p) // PolicyAllow: the owner approves by itself
	cmd, stdin, out := startChallenger(t, filepath.Dir(p.Config))
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "owned") {
		t.Fatalf("challenger: %q, want it to own", sc.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	// The successor's engine starts first and records its epoch in the journal.
	j, err := journal.Open(p.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Acquire(h.Epoch()+1, time.Now()); err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	// This owner's start comes only now, fenced.
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), h, p, LogNotifier{}, slog.New(slog.DiscardHandler), Hooks{})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve fenced by a takeover during its start: %v, want nil (a handover)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
	if err := h.Err(); !errors.Is(err, ownership.ErrReleased) {
		t.Fatalf("handle ended with %v, want ErrReleased", err)
	}
}

// startChallenger starts a copy of the test binary as a challenger for the profile whose state
// directory is dir, and returns it with its stdin and stdout.
func startChallenger(t *testing.T, dir string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	var stdin io.WriteCloser
	var out io.ReadCloser
	cmd, err := proctest.Start(t, func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChallenger+"="+dir)
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if out, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
		return cmd
	})
	if err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, out
}
