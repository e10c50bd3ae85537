package instance

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The test binary re-executes itself as a launch of the desktop app (a real second process with
// its own lock and socket), so the protocol is tested between processes, as it is used.
const (
	envHelper = "ROUTINELY_INSTANCE_TEST_HELPER"
	envDir    = "ROUTINELY_INSTANCE_TEST_DIR"
)

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) == "launch" {
		os.Exit(launch(os.Getenv(envDir)))
	}
	goleak.VerifyTestMain(m)
}

// launch is one app start: it prints "primary" and then "show" for each launch that asks for
// the window, until its stdin closes; or it prints "handed PID" when another app answered.
func launch(dir string) int {
	p, err := Claim(dir, true, 0)
	var running *RunningError
	switch {
	case errors.As(err, &running):
		fmt.Printf("handed %d\n", running.PID)
		return 0
	case err != nil:
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("primary")
	p.Serve(func() { fmt.Println("show") })
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the test closes stdin
	p.Close()
	fmt.Println("closed")
	return 0
}

type helper struct {
	cmd   *exec.Cmd
	lines chan string
	stdin interface{ Close() error }
}

// startLaunch runs launch in a new process on dir.
func startLaunch(t *testing.T, dir string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=launch", envDir+"="+dir)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, lines: make(chan string, 16), stdin: in}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- strings.TrimSpace(sc.Text())
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return h
}

func (h *helper) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-h.lines:
		if !ok {
			t.Fatalf("helper pid %d exited without a line", h.cmd.Process.Pid)
		}
		return l
	case <-time.After(15 * time.Second):
		t.Fatalf("helper pid %d said nothing within 15 s", h.cmd.Process.Pid)
	}
	return ""
}

func (h *helper) expect(t *testing.T, want string) {
	t.Helper()
	if got := h.next(t); got != want {
		t.Fatalf("helper pid %d said %q, want %q", h.cmd.Process.Pid, got, want)
	}
}

// stateDir is a private directory as ownership.StateDir leaves it (0700).
func stateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustRunning(t *testing.T, p *Primary, err error, pid int) {
	t.Helper()
	var running *RunningError
	if !errors.As(err, &running) || !errors.Is(err, ErrRunning) {
		p.Close()
		t.Fatalf("Claim = %v, %v; want a *RunningError", p, err)
	}
	if running.PID != pid {
		t.Fatalf("the running app says pid %d, want %d", running.PID, pid)
	}
}

// A second launch on the profile asks the first to show its window and is told to exit; the
// first keeps running. A launch with show false (--background) does not ask for the window.
func TestSecondLaunchShowsTheFirst(t *testing.T) {
	dir := stateDir(t)
	first := startLaunch(t, dir)
	first.expect(t, "primary")

	p, err := Claim(dir, true, 0)
	mustRunning(t, p, err, first.cmd.Process.Pid)
	first.expect(t, "show")

	p, err = Claim(dir, false, 0)
	mustRunning(t, p, err, first.cmd.Process.Pid)

	// A launch process of its own, as a second click on the launcher is.
	second := startLaunch(t, dir)
	second.expect(t, fmt.Sprintf("handed %d", first.cmd.Process.Pid))
	first.expect(t, "show") // the background Claim above sent no "show"
}

// Two profiles are two apps.
func TestTwoProfilesAreTwoApps(t *testing.T) {
	a, b := startLaunch(t, stateDir(t)), startLaunch(t, stateDir(t))
	a.expect(t, "primary")
	b.expect(t, "primary")
}

// A clean quit leaves no socket, and the next launch becomes the app; the lock file stays (it is
// never deleted, like owner.lock) and is reused.
func TestCloseHandsTheProfileOn(t *testing.T) {
	dir := stateDir(t)
	first := startLaunch(t, dir)
	first.expect(t, "primary")
	_ = first.stdin.Close()
	first.expect(t, "closed")
	if _, err := os.Lstat(filepath.Join(dir, SocketName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket still there after Close: %v", err)
	}
	p, err := Claim(dir, true, 0)
	if err != nil || p == nil {
		t.Fatalf("Claim after the first app quit = %v, %v; want this process to be the app", p, err)
	}
	p.Close()
	p.Close() // idempotent
	var nilPrimary *Primary
	nilPrimary.Serve(nil)
	nilPrimary.Close()
}

// An app killed with SIGKILL leaves its socket file; the next launch takes over the profile
// without anyone deleting it, and answers launches itself.
func TestStaleSocketAfterSIGKILL(t *testing.T) {
	dir := stateDir(t)
	first := startLaunch(t, dir)
	first.expect(t, "primary")
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	if fi, err := os.Lstat(filepath.Join(dir, SocketName)); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("expected the killed app's socket to be left behind: %v %v", fi, err)
	}
	second := startLaunch(t, dir)
	second.expect(t, "primary")
	third := startLaunch(t, dir)
	third.expect(t, fmt.Sprintf("handed %d", second.cmd.Process.Pid))
	second.expect(t, "show")
}

// Launches at the same instant elect exactly one app; every other one is handed to it.
func TestConcurrentLaunchesElectOne(t *testing.T) {
	dir := stateDir(t)
	var hs []*helper
	for range 6 {
		hs = append(hs, startLaunch(t, dir))
	}
	primaries, handed := 0, 0
	var primaryPID int
	var handedTo []string
	for _, h := range hs {
		switch l := h.next(t); {
		case l == "primary":
			primaries++
			primaryPID = h.cmd.Process.Pid
		case strings.HasPrefix(l, "handed "):
			handed++
			handedTo = append(handedTo, strings.TrimPrefix(l, "handed "))
		default:
			t.Fatalf("unexpected line %q", l)
		}
	}
	if primaries != 1 || handed != len(hs)-1 {
		t.Fatalf("%d primaries and %d handed launches, want 1 and %d", primaries, handed, len(hs)-1)
	}
	for _, pid := range handedTo {
		if pid != fmt.Sprint(primaryPID) {
			t.Fatalf("a launch was handed to pid %s, want the one app %d", pid, primaryPID)
		}
	}
}

// Peers that send garbage, an oversized line or nothing at all do not stop the app from answering
// the next launch, and are never taken for a request to show the window.
func TestGarbageAndSilentPeers(t *testing.T) {
	dir := stateDir(t)
	first := startLaunch(t, dir)
	first.expect(t, "primary")
	sock := filepath.Join(dir, SocketName)
	var silent []net.Conn
	for range maxPeers + 2 { // more silent peers than are answered at once
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		silent = append(silent, c)
	}
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	for _, junk := range []string{"hello\n", strings.Repeat("show", 100) + "\n", "show", "\x00\xff\n"} {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(junk))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if line, err := readLine(c); err == nil {
			t.Errorf("the app answered %q to %q", line, junk)
		}
		c.Close()
	}
	start := time.Now()
	p, err := Claim(dir, true, 0)
	mustRunning(t, p, err, first.cmd.Process.Pid)
	first.expect(t, "show") // the first line after "primary": no junk was taken for "show"
	if took := time.Since(start); took > Patience {
		t.Fatalf("the launch took %s behind silent peers", took)
	}
}

// A state directory whose socket path is too long is refused before anything is created.
func TestSocketPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", maxSocketPath))
	p, err := Claim(dir, true, 0)
	if !errors.Is(err, ErrSocketPath) || p != nil {
		t.Fatalf("Claim = %v, %v; want ErrSocketPath", p, err)
	}
}
