package bridge

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The test binary re-executes itself as a window process (EnvWindowProcess=1, the marker the
// app uses) that speaks the real bridge over the spawner's pipes, without Fyne: it says hello
// with RunNow("hello PID"), answers each raise with RunNow("raised PID") and exits 0 when told
// to close or when the app has gone. It can also run as a small app (envHelperApp) that starts
// such a window process, so a test can kill the app and watch its window process.
const (
	envHelperMode = "ROUTINELY_BRIDGE_TEST_MODE" // "stubborn": ignore the close (but not EOF)
	envHelperApp  = "ROUTINELY_BRIDGE_TEST_APP"
)

func TestMain(m *testing.M) {
	if IsWindowProcess() {
		os.Exit(runHelperWindow())
	}
	if os.Getenv(envHelperApp) != "" {
		os.Exit(runHelperApp())
	}
	goleak.VerifyTestMain(m)
}

func runHelperWindow() int {
	conn, err := ChildConn()
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper window:", err)
		return 1
	}
	// A library printing to stdout must not corrupt the stream: this goes to stderr now.
	fmt.Println("stray output on stdout")
	c := NewClient(conn, nil)
	pid := strconv.Itoa(os.Getpid())
	var cur Cursor
	for {
		u, err := c.Next(cur)
		if err != nil {
			return 0 // the app has gone
		}
		first := cur == Cursor{}
		cur = u.Cursor
		switch {
		case u.Closed && os.Getenv(envHelperMode) == "stubborn":
			select {} // wait to be killed
		case u.Closed:
			return 0
		case first:
			_ = c.RunNow("hello " + pid)
		case u.Raise:
			_ = c.RunNow("raised " + pid)
		}
	}
}

// runHelperApp starts a window process, prints its pid once it has said hello, then waits to
// be killed.
func runHelperApp() int {
	rec := &recorder{}
	s := &Spawner{Command: helperCommand(""), Acts: rec, Feed: NewFeed()}
	if err := s.Show(); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	pid := s.PID()
	for !strings.HasPrefix(fmt.Sprint(rec.last().args...), "hello") {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println(pid)
	select {}
}

func helperCommand(mode string) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), EnvWindowProcess+"=1", envHelperMode+"="+mode, envHelperApp+"=")
		cmd.Stderr = os.Stderr
		return cmd
	}
}

func newSpawner(t *testing.T, mode string) (*Spawner, *recorder) {
	t.Helper()
	rec := &recorder{}
	s := &Spawner{Command: helperCommand(mode), Acts: rec, Feed: NewFeed()}
	t.Cleanup(func() { s.Stop(5 * time.Second) })
	return s, rec
}

// gone reports whether pid has exited (a zombie nobody reaped counts as exited).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

func waitGone(t *testing.T, pid int, within time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: pid %d still runs after %v", what, pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSecondShowRaisesTheRunningWindow: Show starts one window process; a second Show while it
// runs raises its window instead of starting another.
func TestSecondShowRaisesTheRunningWindow(t *testing.T) {
	s, rec := newSpawner(t, "")
	if err := s.Show(); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	rec.waitFor(t, "RunNow", "hello "+strconv.Itoa(pid))
	if err := s.Show(); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "RunNow", "raised "+strconv.Itoa(pid))
	if got := s.PID(); got != pid {
		t.Errorf("a second Show started window process %d next to %d", got, pid)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	hellos := 0
	for _, c := range rec.calls {
		if strings.HasPrefix(fmt.Sprint(c.args...), "hello") {
			hellos++
		}
	}
	if hellos != 1 {
		t.Errorf("%d window processes said hello, want 1: %v", hellos, rec.calls)
	}
}

// TestKilledWindowProcessIsReplaced: SIGKILL of the window process leaves the app as it was;
// the next Show starts a new one, which gets the current state.
func TestKilledWindowProcessIsReplaced(t *testing.T) {
	s, rec := newSpawner(t, "")
	if err := s.Show(); err != nil {
		t.Fatal(err)
	}
	first := s.PID()
	rec.waitFor(t, "RunNow", "hello "+strconv.Itoa(first))
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.PID() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the spawner still counts the killed window process after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Show(); err != nil {
		t.Fatal(err)
	}
	second := s.PID()
	if second == 0 || second == first {
		t.Fatalf("Show after the kill: pid %d (the killed one was %d)", second, first)
	}
	rec.waitFor(t, "RunNow", "hello "+strconv.Itoa(second))
}

// TestStopClosesTheWindowProcess: Stop tells the window process to close and it exits; a
// window process that ignores that is killed after the grace; Show then refuses.
func TestStopClosesTheWindowProcess(t *testing.T) {
	for _, mode := range []string{"", "stubborn"} {
		t.Run("mode="+mode, func(t *testing.T) {
			s, rec := newSpawner(t, mode)
			if err := s.Show(); err != nil {
				t.Fatal(err)
			}
			pid := s.PID()
			rec.waitFor(t, "RunNow", "hello "+strconv.Itoa(pid))
			// Generous for a loaded machine: a window process that closes when told ends Stop
			// long before the grace; one that does not is killed once it has passed.
			grace := 15 * time.Second
			if mode == "stubborn" {
				grace = time.Second
			}
			start := time.Now()
			s.Stop(grace)
			took := time.Since(start)
			if !gone(pid) {
				t.Errorf("the window process %d still runs after Stop", pid)
			}
			if mode == "" && took > grace*2/3 {
				t.Errorf("Stop took %v: the window process did not close when told", took)
			}
			if mode == "stubborn" && took < grace {
				t.Errorf("Stop returned after %v, before its grace, with a window process that ignores the close", took)
			}
			if err := s.Show(); err != ErrShut {
				t.Errorf("Show after Stop = %v, want ErrShut", err)
			}
		})
	}
}

// TestWindowProcessEndsWithTheApp: when the app is SIGKILLed, its window process sees the end
// of its pipe and exits: no window outlives the app.
func TestWindowProcessEndsWithTheApp(t *testing.T) {
	app := exec.Command(os.Args[0], "-test.run=^$")
	app.Env = append(os.Environ(), envHelperApp+"=1")
	app.Stderr = os.Stderr
	out, err := app.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = app.Process.Kill(); _ = app.Wait() }()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	var pid int
	select {
	case l := <-line:
		if pid, err = strconv.Atoi(l); err != nil {
			t.Fatalf("the helper app said %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the helper app did not start its window process within 20 s")
	}
	if gone(pid) {
		t.Fatalf("window process %d is not running", pid)
	}
	if err := app.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = app.Wait()
	waitGone(t, pid, 10*time.Second, "after the app was SIGKILLed, its window process")
}

// TestFrozenWindowProcessIsReplaced: a window process that does not handle a raise in time
// (SIGSTOPped here; a hung toolkit alike) is killed and replaced, so Open still brings a window.
func TestFrozenWindowProcessIsReplaced(t *testing.T) {
	s, rec := newSpawner(t, "")
	s.AnswerWait = time.Second
	if err := s.Show(); err != nil {
		t.Fatal(err)
	}
	frozen := s.PID()
	rec.waitFor(t, "RunNow", "hello "+strconv.Itoa(frozen))
	if err := s.Show(); err != nil { // a raise it answers: kept
		t.Fatal(err)
	}
	rec.waitFor(t, "RunNow", "raised "+strconv.Itoa(frozen))
	time.Sleep(2 * s.AnswerWait)
	if s.PID() != frozen {
		t.Fatalf("a window process that answered its raise was replaced (%d → %d)", frozen, s.PID())
	}
	if err := syscall.Kill(frozen, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(frozen, syscall.SIGCONT)
	if err := s.Show(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, frozen, 20*time.Second, "the frozen window process")
	deadline := time.Now().Add(20 * time.Second)
	for s.PID() == 0 || s.PID() == frozen {
		if time.Now().After(deadline) {
			t.Fatal("no new window process 20 s after the frozen one was ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rec.waitFor(t, "RunNow", "hello "+strconv.Itoa(s.PID()))
}
