//go:build linux || windows

package ownership

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"go.uber.org/goleak"

	"github.com/routinely/routinely/internal/proctest"
)

// The test binary re-executes itself as a helper process when envHelper names a mode, so every
// contender is a real process with its own descriptors, signals and death.
const (
	envHelper   = "ROUTINELY_OWNERSHIP_HELPER"
	envDir      = "ROUTINELY_TEST_DIR"
	envPolicy   = "ROUTINELY_TEST_POLICY"
	envInterval = "ROUTINELY_TEST_INTERVAL_MS"
	envTimeout  = "ROUTINELY_TEST_TIMEOUT_MS"
	envArgs     = "ROUTINELY_TEST_ARGS"
	// envOnTerm makes a contender shut down gracefully on SIGTERM, as the daemon does: it keeps
	// owning (and heartbeating) for that many ms, as if draining runs, then releases and exits 0.
	envOnTerm = "ROUTINELY_TEST_ON_TERM_MS"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelper); mode != "" {
		os.Exit(runHelper(mode))
	}
	goleak.VerifyTestMain(m)
}

// ---- helper side ----------------------------------------------------------------------------

var outMu sync.Mutex

// say prints one protocol line to the parent test.
func say(format string, a ...any) {
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", a...)
}

func helperOptions() Options {
	iv, _ := strconv.Atoi(os.Getenv(envInterval))
	if iv == 0 {
		iv = 100
	}
	return Options{
		Dir: os.Getenv(envDir), Role: RoleDaemon, Version: "test",
		HeartbeatInterval: time.Duration(iv) * time.Millisecond,
		Policy:            Policy(os.Getenv(envPolicy)),
	}
}

func runHelper(mode string) int {
	switch mode {
	case "contender":
		return helperContender()
	case "takeover":
		return helperTakeover()
	case "bareflock":
		return helperBareFlock()
	case "sleep":
		// An unrelated live process (or, started by an owner, a child outliving it).
		time.Sleep(time.Minute)
		return 0
	}
	if run, ok := osHelperModes[mode]; ok {
		return run()
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// helperContender obeys one command per stdin line and exits (releasing) when stdin closes.
func helperContender() int {
	opts := helperOptions()
	var h *Handle
	var done func()
	var mu sync.Mutex
	owned := func(nh *Handle, err error) {
		if err != nil {
			var oe *OwnedError
			if errors.As(err, &oe) {
				holder := 0
				if oe.Holder != nil {
					holder = oe.Holder.PID
				}
				say("refused %d %d", holder, oe.Status.HolderPID)
				return
			}
			say("error %v", err)
			return
		}
		mu.Lock()
		h = nh
		mu.Unlock()
		if ms, _ := strconv.Atoi(os.Getenv(envOnTerm)); ms > 0 {
			term := make(chan os.Signal, 1)
			signal.Notify(term, syscall.SIGTERM)
			go func() {
				<-term
				say("sigterm")
				time.Sleep(time.Duration(ms) * time.Millisecond)
				_ = nh.Release(context.Background())
				os.Exit(0)
			}()
		}
		say("owned %d %d %d %s", nh.Epoch(), os.Getpid(), time.Now().UnixNano(), nh.Token())
		go func() {
			for ev := range nh.Events() {
				say("event %s", ev.Kind)
			}
			say("lost %v", nh.Err())
		}()
	}
	if os.Getenv(envPolicy) == string(PolicyAsk) {
		opts.OnRequest = func(r Request) { say("request %s", r.ID) }
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		mu.Lock()
		cur := h
		mu.Unlock()
		switch f[0] {
		case "acquire":
			owned(Acquire(context.Background(), opts))
		case "wait":
			say("waiting")
			go func() { owned(Wait(context.Background(), opts)) }()
		case "beginrun":
			d, err := cur.BeginRun("r", time.Now())
			done = d
			say("beginrun %v", err)
		case "endrun":
			done()
			say("endrun")
		case "wedge":
			// Hold the handle's lock forever: the heartbeat loop blocks, the process keeps running.
			go cur.mu.Lock()
			say("wedged")
		case "release":
			say("released %v", cur.Release(context.Background()))
		case "admitting":
			say("admitting %v", cur.Admitting())
		case "decide":
			say("decided %v", cur.Decide(f[1], f[2] == "approve"))
		case "spawn":
			kids, err := spawnChildren()
			if err != nil {
				say("error %v", err)
				continue
			}
			say("children %s", strings.Join(kids, " "))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if h != nil {
		_ = h.Release(context.Background())
	}
	return 0
}

// helperTakeover runs Takeover and reports progress and the outcome, then holds until stdin closes.
func helperTakeover() int {
	opts := helperOptions()
	ms, _ := strconv.Atoi(os.Getenv(envTimeout))
	t := TakeoverOptions{
		Timeout:  time.Duration(ms) * time.Millisecond,
		Progress: func(p TakeoverProgress) { say("progress %s", p.Decision) },
	}
	h, err := Takeover(context.Background(), opts, t)
	if err != nil {
		say("error %v", err)
		return 0
	}
	say("owned %d %d %d %s", h.Epoch(), os.Getpid(), time.Now().UnixNano(), h.Token())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = h.Release(context.Background())
	return 0
}

// helperBareFlock is the benchmark baseline: a bare gofrs/flock TryLock poll loop, no protocol.
func helperBareFlock() int {
	fl := flock.New(filepath.Join(os.Getenv(envDir), lockName))
	say("waiting")
	if err := fl.Lock(); err != nil { // blocking, like a standby: the kernel wakes it
		say("error %v", err)
		return 1
	}
	say("owned 0 %d %d -", os.Getpid(), time.Now().UnixNano())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// ---- test side ------------------------------------------------------------------------------

// proc is a running helper process.
type proc struct {
	tb     testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
	seen   []string
	exited chan struct{}
}

// lineWriter turns the helper's stdout into lines on a channel.
type lineWriter struct {
	buf []byte
	ch  chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.ch <- string(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

// startHelper starts the test binary (or bin, when set) in mode with dir and extra env.
func startHelper(tb testing.TB, mode, dir string, env ...string) *proc {
	return startHelperAs(tb, "", nil, mode, dir, env...)
}

// startHelperAs is startHelper with another binary (bin, or the test binary when "") and process
// attributes (attr, may be nil: e.g. another user's credentials on Linux).
func startHelperAs(tb testing.TB, bin string, attr *syscall.SysProcAttr, mode, dir string, env ...string) *proc {
	tb.Helper()
	if bin == "" {
		bin = os.Args[0]
	}
	p := &proc{tb: tb, lines: make(chan string, 4096), stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd, err := proctest.Start(tb, func() *exec.Cmd {
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = append(os.Environ(), envHelper+"="+mode, envDir+"="+dir)
		cmd.Env = append(cmd.Env, env...)
		cmd.SysProcAttr = attr
		cmd.Stdout = &lineWriter{ch: p.lines}
		cmd.Stderr = p.stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		p.stdin = stdin
		return cmd
	})
	if err != nil {
		tb.Fatalf("start helper: %v", err)
	}
	p.cmd = cmd
	go func() { _ = cmd.Wait(); close(p.lines); close(p.exited) }()
	tb.Cleanup(func() {
		p.kill()
		if tb.Failed() && p.stderr.Len() > 0 {
			tb.Logf("helper %d stderr:\n%s", cmd.Process.Pid, p.stderr.String())
		}
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// send writes one command line to the helper.
func (p *proc) send(cmd string) {
	p.tb.Helper()
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		p.tb.Fatalf("send %q to helper %d: %v", cmd, p.pid(), err)
	}
}

// expect returns the fields of the next line starting with prefix (alternatives separated by
// "|"), remembering skipped lines.
func (p *proc) expect(prefix string, timeout time.Duration) []string {
	p.tb.Helper()
	f, ok := p.next(prefix, timeout)
	if !ok {
		p.tb.Fatalf("helper %d: no %q line within %s; saw %q; stderr: %s", p.pid(), prefix, timeout, p.seen, p.stderr.String())
	}
	return f
}

// next is expect without failing.
func (p *proc) next(prefix string, timeout time.Duration) ([]string, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return nil, false
			}
			p.seen = append(p.seen, l)
			for _, pre := range strings.Split(prefix, "|") {
				if strings.HasPrefix(l, pre) {
					return strings.Fields(l), true
				}
			}
		case <-deadline.C:
			return nil, false
		}
	}
}

// kill SIGKILLs the helper and reaps it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop closes stdin (the helper releases and exits) and waits.
func (p *proc) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.kill()
	}
}

// owned parses an "owned EPOCH PID NANOS TOKEN" line.
func parseOwned(tb testing.TB, f []string) (epoch uint64, pid int, at time.Time, token string) {
	tb.Helper()
	if len(f) < 5 || f[0] != "owned" {
		tb.Fatalf("not an owned line: %q", f)
	}
	epoch, _ = strconv.ParseUint(f[1], 10, 64)
	pid, _ = strconv.Atoi(f[2])
	ns, _ := strconv.ParseInt(f[3], 10, 64)
	return epoch, pid, time.Unix(0, ns), f[4]
}

// exitedPID returns the pid of a process that has run and exited (a copy of the test binary
// running no test): no live process has it, until the OS reuses it.
func exitedPID(tb testing.TB) int {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=none")
	cmd, err := proctest.StartCmd(tb, cmd)
	if err == nil {
		_ = cmd.Wait() // "none" is no mode: it exits 2 at once
	}
	if cmd.ProcessState == nil {
		tb.Fatal("could not run a short-lived process")
	}
	return cmd.ProcessState.Pid()
}

// testDir returns a fresh state directory prepared by StateDir.
func testDir(tb testing.TB) string {
	tb.Helper()
	dir, err := StateDir(filepath.Join(tb.TempDir(), "state"))
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// heldBy reports whether pid holds the guard as st reports it: by Status.HolderPID where the OS
// names the holder (lockHolderKnown), else by a believable owner record naming pid.
func heldBy(st Status, pid int) bool {
	if lockHolderKnown {
		return st.Held && st.HolderPID == pid
	}
	return st.Held && st.HolderPID == 0 && st.Alive && st.Record != nil && st.Record.PID == pid
}

// hasDiag reports whether st has a diagnosis of kind k.
func hasDiag(st Status, k DiagnosisKind) bool {
	for _, d := range st.Diagnoses {
		if d.Kind == k {
			return true
		}
	}
	return false
}

// eventually polls cond every 10 ms until it holds or timeout passes.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// acquireT acquires dir in this process and releases at cleanup.
func acquireT(tb testing.TB, opts Options) *Handle {
	tb.Helper()
	h, err := Acquire(context.Background(), opts)
	if err != nil {
		tb.Fatalf("Acquire: %v", err)
	}
	tb.Cleanup(func() { _ = h.Release(context.Background()) })
	return h
}

const long = 20 * time.Second // generous deadline for a loaded 2-core CI machine

// receive returns the next value from ch, failing the test when none arrives within long.
func receive[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(long):
		tb.Fatalf("timed out after %s waiting for %s", long, what)
	}
	var zero T
	return zero
}
