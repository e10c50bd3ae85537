package scheduler

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"

	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"

	"github.com/routinely/routinely/scheduler/action"
)

// TestMain doubles as the child process of the multi-process tests: with ROUTINELY_TEST_CHILD
// set, the test binary runs that role instead of the tests.
func TestMain(m *testing.M) {
	if role := os.Getenv("ROUTINELY_TEST_CHILD"); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m)
}

// fakeGate stands in for *ownership.Handle: an epoch, an admitting switch and counters.
type fakeGate struct {
	epoch     uint64
	admitting atomic.Bool
	inFlight  atomic.Int64
	ticks     atomic.Int64
	// onTick, when set before the engine starts, runs at each NoteTick (a slot handled): a test
	// yields there to cut a catch-up pass short.
	onTick func()
}

func newGate(epoch uint64) *fakeGate {
	g := &fakeGate{epoch: epoch}
	g.admitting.Store(true)
	return g
}

func (g *fakeGate) Epoch() uint64   { return g.epoch }
func (g *fakeGate) Admitting() bool { return g.admitting.Load() }
func (g *fakeGate) NoteTick(time.Time) {
	g.ticks.Add(1)
	if g.onTick != nil {
		g.onTick()
	}
}
func (g *fakeGate) BeginRun(string, time.Time) (func(), error) {
	if !g.admitting.Load() {
		return nil, errNotAdmitting
	}
	g.inFlight.Add(1)
	var once sync.Once
	return func() { once.Do(func() { g.inFlight.Add(-1) }) }, nil
}

// fakeAction records its inputs; block (if set) holds each run until closed or ctx ends.
type fakeAction struct {
	mu      sync.Mutex
	inputs  []action.Input
	block   chan struct{}
	started chan string // receives the routine name when a run starts (if non-nil)
	result  func(n int) action.Result
	panics  bool
}

func (f *fakeAction) Run(ctx context.Context, in action.Input) action.Result {
	f.mu.Lock()
	f.inputs = append(f.inputs, in)
	n := len(f.inputs)
	f.mu.Unlock()
	if f.started != nil {
		f.started <- in.Routine
	}
	if f.panics {
		panic("boom")
	}
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return action.Result{Outcome: journal.OutcomeFailed, Summary: "killed"}
		}
	}
	if f.result != nil {
		return f.result(n)
	}
	return action.Result{Outcome: journal.OutcomeSuccess, Attempts: 1}
}

// waitStarted waits (bounded) for the next run to start.
func (f *fakeAction) waitStarted(t testing.TB) {
	t.Helper()
	select {
	case <-f.started:
	case <-time.After(15 * time.Second):
		t.Fatal("timed out waiting for a run to start")
	}
}

func (f *fakeAction) runs() []action.Input {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]action.Input(nil), f.inputs...)
}

// harness is an engine over a real journal file and routines.toml in a temp dir.
type harness struct {
	t     testing.TB
	dir   string
	cfg   string
	j     *journal.Journal
	gate  *fakeGate
	clock *clockwork.FakeClock
	act   *fakeAction
	e     *Engine
	wake  *fakeWallMono
	notes *recordingNotifier
	// logger, when set before start, receives the engine's log (default: discarded).
	logger *slog.Logger
	// zones, when set before start, is the engine's system time zone (default: the machine's).
	zones config.ZoneSource
	// afterArm, when set before start, runs between arming and the start's catch-up pass.
	afterArm func(*Engine)
	// orphanGrace, when set before start, replaces the SIGTERM-to-SIGKILL grace for an earlier
	// owner's leftover runs.
	orphanGrace time.Duration
	// onJournal, when set before start, is the engine's EngineOptions.OnJournal.
	onJournal func(time.Time, error)
	// jitter, when set before start, is each run's jitter given the routine's maximum
	// (default: random).
	jitter func(max time.Duration) time.Duration
	// coord, when set before start, is the engine's EngineOptions.Coordinator (default: none).
	coord Coordinator
	// onChange, when set before start, is the engine's EngineOptions.OnChange.
	onChange func()
	// pollEvery, when set before start, replaces the poller's 0.5 s.
	pollEvery time.Duration
	// commitWait, when set before start, replaces the 10 s the poller keeps looking for commits
	// after the journal watch's setup and after each reported write.
	commitWait time.Duration
}

// recordingNotifier keeps every notification.
type recordingNotifier struct {
	mu    sync.Mutex
	notes []string
}

func (n *recordingNotifier) Notify(title, body string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes = append(n.notes, title+": "+body)
	return nil
}

// Warn records a warning as "warning: TITLE: BODY" (the engine's WarningNotifier path).
func (n *recordingNotifier) Warn(title, body string) error {
	return n.Notify("warning: "+title, body)
}

func (n *recordingNotifier) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.notes...)
}

func newHarness(t testing.TB, body string, start time.Time) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, dir: dir, cfg: filepath.Join(dir, "routines.toml"), gate: newGate(1),
		clock: clockwork.NewFakeClockAt(start), act: &fakeAction{}, notes: &recordingNotifier{}}
	if err := os.WriteFile(h.cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(filepath.Join(dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	h.j = j
	t.Cleanup(func() { _ = j.Close() })
	return h
}

// start builds and starts the engine with the fake action and fake wake clock.
func (h *harness) start() *Engine {
	h.t.Helper()
	h.wake = newFakeWallMono(h.clock.Now())
	logger := h.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e, err := NewEngine(EngineOptions{ConfigPath: h.cfg, Journal: h.j, Gate: h.gate, Clock: h.clock,
		Logger: logger, WakeClock: h.wake, Notifier: h.notes, OnJournal: h.onJournal, Coordinator: h.coord,
		OnChange: h.onChange})
	if err != nil {
		h.t.Fatal(err)
	}
	e.newAction = func(*config.Routine) (action.Action, error) { return h.act, nil }
	if h.zones != nil {
		e.zones = h.zones
	}
	if h.afterArm != nil {
		e.afterArm = func() { h.afterArm(e) }
	}
	if h.orphanGrace != 0 {
		e.orphanGrace = h.orphanGrace
	}
	if h.jitter != nil {
		e.jitter = h.jitter
	}
	if h.pollEvery != 0 {
		e.pollEvery = h.pollEvery
	}
	if h.commitWait != 0 {
		e.commitWait = h.commitWait
	}
	if err := e.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.e = e
	h.t.Cleanup(func() { h.stop() })
	return e
}

func (h *harness) stop() {
	if h.e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.e.Stop(ctx); err != nil {
		h.t.Errorf("stop: %v", err)
	}
	h.e = nil
}

// advance moves the fake clock in steps so every armed timer fires in order, waiting for
// gocron's timers to be re-armed between steps.
func (h *harness) advance(d, step time.Duration) {
	h.t.Helper()
	for d > 0 {
		s := min(step, d)
		h.settle()
		h.clock.Advance(s)
		d -= s
	}
	h.settle()
}

// settle waits until gocron and the engine are idle: every routine's timer armed again and
// no run goroutine between dispatch and record.
func (h *harness) settle() {
	h.t.Helper()
	n := 0
	if h.e != nil {
		h.e.mu.Lock()
		n = len(h.e.routines)
		h.e.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = h.clock.BlockUntilContext(ctx, n)
	time.Sleep(5 * time.Millisecond)
	if h.e != nil && h.act.block == nil {
		// A fired timer's gocron task can reach the engine after the engine looked idle (slow
		// machines, Wine): give due slots a moment to be handed over, so that the next clock step
		// does not turn them into catch-up. Not a failure when they stay unhandled (a gate that
		// admits nothing, a test that wants them missed).
		for deadline := time.Now().Add(2 * time.Second); !h.dueHandled() && time.Now().Before(deadline); {
			time.Sleep(2 * time.Millisecond)
		}
		eventually(h.t, "runs to finish", h.e.idle)
	}
}

// dueHandled reports whether every routine's slots due by the fake clock's now have been
// handed to dispatch (or recorded by catch-up): a timer that has fired but whose gocron task has
// not called the engine yet leaves a slot due and unhandled, and the engine looks idle meanwhile.
func (h *harness) dueHandled() bool {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	now := h.clock.Now()
	for _, a := range h.e.routines {
		if next := a.sched.Next(a.lastSlot); !next.IsZero() && !next.After(now) {
			return false
		}
	}
	return true
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runsOf returns routine's journal rows, oldest first.
func runsOf(t testing.TB, j *journal.Journal, routine string) []journal.Run {
	t.Helper()
	h, err := j.History(routine, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := 0, len(h)-1; i < k; i, k = i+1, k-1 {
		h[i], h[k] = h[k], h[i]
	}
	return h
}

func countOutcome(runs []journal.Run, outcome string) int {
	n := 0
	for _, r := range runs {
		if r.Outcome == outcome {
			n++
		}
	}
	return n
}

// fakeWallMono moves wall and monotonic time independently; tick() makes the watcher compare.
type fakeWallMono struct {
	mu   sync.Mutex
	wall time.Time
	mono time.Duration
	c    chan time.Time
}

func newFakeWallMono(wall time.Time) *fakeWallMono {
	return &fakeWallMono{wall: wall, c: make(chan time.Time)}
}

func (f *fakeWallMono) Wall() time.Time        { f.mu.Lock(); defer f.mu.Unlock(); return f.wall }
func (f *fakeWallMono) Mono() time.Duration    { f.mu.Lock(); defer f.mu.Unlock(); return f.mono }
func (f *fakeWallMono) Tick() <-chan time.Time { return f.c }
func (f *fakeWallMono) Stop()                  {}

// move advances the wall clock by wall and the monotonic clock by mono.
func (f *fakeWallMono) move(wall, mono time.Duration) {
	f.mu.Lock()
	f.wall = f.wall.Add(wall)
	f.mono += mono
	f.mu.Unlock()
}

// tick makes the watcher compare once; it fails the test if the watcher is not listening.
func (f *fakeWallMono) tick(t testing.TB) {
	t.Helper()
	select {
	case f.c <- time.Time{}:
	case <-time.After(15 * time.Second):
		t.Fatal("wake watcher not listening")
	}
}

// newHarnessOn is a new owner (next epoch, own clock and action) over old's files.
func newHarnessOn(t testing.TB, old *harness, start time.Time) *harness {
	return &harness{t: t, dir: old.dir, cfg: old.cfg, j: old.j, gate: newGate(old.gate.epoch + 1),
		clock: clockwork.NewFakeClockAt(start), act: &fakeAction{}, notes: &recordingNotifier{}}
}

// journalURI is journal.URI for tests: the URI of path with params, or the test fails.
func journalURI(tb testing.TB, path string, params url.Values) string {
	tb.Helper()
	u, err := journal.URI(path, params)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
