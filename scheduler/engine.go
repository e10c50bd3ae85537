package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"github.com/routinely/routinely/scheduler/action"
)

// EngineOptions wire an Engine.
type EngineOptions struct {
	ConfigPath string
	Journal    *journal.Journal
	Gate       Gate
	Clock      clockwork.Clock // nil → real clock
	Notifier   Notifier
	Logger     *slog.Logger
	// WakeClock compares wall and monotonic time for wake detection; nil → the real clocks.
	WakeClock WallMonoClock
	// UserAgent is sent by watch and ping actions (action.UserAgent(version)); "" → a default.
	UserAgent string
	// OnJournal, if set, is told when the journal starts refusing writes (since: when the first
	// refused or slow write began, on the engine clock; err: the latest reason) and, with a zero
	// since and nil err, when it accepts them again. Calls come in order, one at a time; it must
	// not block (ownership.Handle.NoteJournal fits).
	OnJournal func(since time.Time, err error)
	// OnChange, if set, is told that what Routines, Problems or ConfigError return may have
	// changed: a run started or ended, a slot was recorded without a run, the pauses were read
	// again, or routines.toml was applied or found broken. Calls come from any goroutine, often
	// several for one change; it must not block or call the Engine (the desktop's
	// session.Refresh fits: it coalesces them into one snapshot).
	OnChange func()
	// Coordinator, if set, shares the routines with the owners of other devices through a hub
	// (docs/design.md#9-devices); nil: this device runs every routine alone.
	Coordinator Coordinator
}

// Engine schedules the routines of one owner: gocron arms the timers (only while the Gate
// admits), the journal claims every slot before its run, and catch-up, wake and config
// watchers repair what timers alone get wrong.
type Engine struct {
	opts      EngineOptions
	clock     clockwork.Clock
	log       *slog.Logger
	j         *journal.Journal
	looks     StatesCache // Routines' journal reads, again only once the journal changed
	gate      Gate
	coord     Coordinator // nil without a hub
	alerts    *action.Alerts
	newAction func(r *config.Routine) (action.Action, error)
	afterArm  func() // tests: runs between arming and the start's catch-up pass (nil in production)
	// startLast holds, for each routine the start's catch-up pass has not handled yet, its latest
	// claimed slot as read before arming (zero: none; see runStartPass); nil once done. While it
	// is set, a config reload or zone change waits (reloadDeferred). Guarded by mu.
	startLast map[string]time.Time
	jitter    func(max time.Duration) time.Duration // a run's random delay in [0, max); tests fix it

	orphanGrace time.Duration // SIGTERM to SIGKILL for an earlier owner's leftover runs (orphans.go)

	// reloadDeferred: a routines.toml change came while the start's pass was pending; it
	// applies when the pass is done (runStartPass). Guarded by mu.
	reloadDeferred bool

	lateTolerance time.Duration // a timer firing later than this is repaired by catch-up
	pollEvery     time.Duration // run-now request polling
	// commitWait is how long after the journal watch's setup and after each reported journal
	// write the poller keeps looking for commits it cannot see yet (commitLooks): an fsync on a
	// busy disk can take seconds.
	commitWait time.Duration
	wakeEvery  time.Duration // wake watcher period (at most 15 s, so a wake is repaired promptly)

	mu       sync.Mutex
	cfg      *config.Config // last good set
	problems []config.Problem
	broken   *config.Problem // routines.toml does not parse: cfg is the last good set
	routines map[string]*armed
	pauses   map[string]journal.Pause // journal pauses, refreshed every pollEvery (requests.go)
	sched    gocron.Scheduler
	stopping bool
	// claimed holds the runs claimed and not yet recorded (EndRunsNow ends their processes);
	// abandoned says EndRunsNow was called: no run starts or is recorded any more, since the
	// process is about to exit (the next owner records the runs, as after a crash).
	claimed   map[*inflight]bool
	abandoned bool

	runCtx    context.Context // parent of every run; cancelled when Stop gives up waiting
	cancelRun context.CancelFunc
	bg        sync.WaitGroup // watchers and pollers
	bgStop    chan struct{}
	runs      sync.WaitGroup // in-flight runs

	taken map[int64]bool // run-now requests this engine dispatched (under mu)
	// The journal's data_version at the poller's last read of pauses and requests, and whether
	// the next poll must read them anyway (journalChanged; under mu).
	version     int64
	versionSeen bool
	repoll      bool
	looked      atomic.Int64  // how many times journalChanged read the data_version (tests)
	pollWake    chan struct{} // wakePoller: capacity 1
	// catchUps holds catch-up runs back to max_parallel_catch_up at a time (catchuplimit.go).
	catchUps   *catchUpLimiter
	tickMu     sync.Mutex
	due, dueAt time.Time // cached earliest next slot and when (real time) it was computed

	duplicates atomic.Int64 // slots dropped as handled already (see Duplicates)
	hubDown    atomic.Bool  // a claim found the hub unreachable and said so (logged once per outage)

	trouble journalTrouble // slots the journal refused, and since when (unclaimed.go)
	// recording serializes recordUnrecorded. Never held with mu or trouble.mu on entry.
	recording sync.Mutex
	// journalChecks counts watchJournal's looks, which an idle engine does not take.
	journalChecks atomic.Int64

	zones  config.ZoneSource // the system time zone (tests substitute a fake)
	zoneMu sync.Mutex        // serializes reading the zone and applying a config in it
	zone   config.Zone       // the system zone the running set follows (under mu)
}

// NewEngine builds an engine; it does not start anything. Errors: a missing Journal or Gate.
func NewEngine(opts EngineOptions) (*Engine, error) {
	if opts.Journal == nil || opts.Gate == nil {
		return nil, errEngineOptions
	}
	if opts.Clock == nil {
		opts.Clock = clockwork.NewRealClock()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.WakeClock == nil {
		opts.WakeClock = realWallMono{base: time.Now()}
	}
	e := &Engine{
		opts: opts, clock: opts.Clock, log: opts.Logger, j: opts.Journal, gate: opts.Gate, coord: opts.Coordinator,
		alerts:      action.NewAlerts(nil),
		orphanGrace: defaultOrphanGrace, lateTolerance: 2 * time.Second, pollEvery: 500 * time.Millisecond, commitWait: 10 * time.Second, wakeEvery: 5 * time.Second,
		routines: map[string]*armed{}, taken: map[int64]bool{}, claimed: map[*inflight]bool{}, bgStop: make(chan struct{}),
		jitter: rand.N[time.Duration], zones: config.SystemZones, catchUps: newCatchUpLimiter(),
		trouble: journalTrouble{began: make(chan struct{}, 1)}, pollWake: make(chan struct{}, 1),
	}
	e.runCtx, e.cancelRun = context.WithCancel(context.Background())
	deps := action.Deps{Notifier: opts.Notifier, Snapshots: opts.Journal, UserAgent: opts.UserAgent}
	e.newAction = func(r *config.Routine) (action.Action, error) {
		a, err := action.New(r.Spec, deps)
		if err != nil {
			return nil, err
		}
		return action.WithRetries(a, r.Retries, e.clock), nil
	}
	return e, nil
}

// startPruneExcess is how many runs past keep_runs a routine must have for the start's
// retention pass (PruneAllLater) to prune it.
const startPruneExcess = 1000

// Start loads the config, records the owner's epoch in the journal, ends the processes of runs
// an earlier owner left `running` and records those runs `interrupted` (orphans.go; this takes
// up to about 10 s when they ignore SIGTERM), arms every routine, runs the catch-up pass, and
// starts the config watcher, the wake watcher and the run-request poller. When routines.toml
// cannot be used it runs the last good version an owner recorded in the journal
// (LoadOrLastGood). ctx is not retained: Stop ends what Start began. Errors: an error wrapping
// ErrConfig when routines.toml is unusable and there is no last good set; ErrFenced when a newer epoch owns the journal; the journal's
// error when the earlier owner's runs cannot be listed; gocron errors, wrapped.
func (e *Engine) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// The watch comes before the read: an edit made while Start arms the routines (which can
	// take a while with many of them) is then seen and applied, never lost until the next edit.
	// An edit before the read is read; its event only re-applies the same file.
	watch, watchErr := e.openConfigWatch()
	watching := false
	defer func() {
		if watch != nil && !watching {
			_ = watch.Close() // Start failed: nothing of it keeps running
		}
	}()
	cfg, broken, lastGood, err := LoadOrLastGood(e.opts.ConfigPath, e.j)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if broken != nil {
		e.log.Warn("routines.toml does not parse; running the last good version", "err", broken,
			"applied_at", lastGood.AppliedAt)
	}
	orphans, err := e.j.Acquire(e.gate.Epoch(), e.clock.Now())
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	// Before any routine is armed: what an earlier owner's runs left running ends first, so no
	// run of this owner overlaps one of its predecessor's.
	if orphans > 0 {
		if err := e.endOrphans(); err != nil {
			return fmt.Errorf("start: %w", err)
		}
	}
	s, err := gocron.NewScheduler(
		gocron.WithClock(e.clock),
		gocron.WithLocation(time.UTC),
		gocron.WithDistributedElector(gateElector{e.gate}),
		gocron.WithStopTimeout(5*time.Second),
	)
	if err != nil {
		return fmt.Errorf("start: gocron: %w", err)
	}
	e.mu.Lock()
	e.sched = s
	e.mu.Unlock()
	// Pauses first: a timer may fire as soon as its job is armed. gocron runs before the jobs
	// are added, so each job's first timer is computed when it is armed (startsAtOnce), not
	// after arming 10,000 routines.
	e.refreshPauses()
	// The start's catch-up pass is bounded by the claims made before this owner's timers are
	// armed: the first timer fires claimLead before its slot and may claim it before the pass
	// runs (see catchUpFrom).
	last, err := e.j.LastSlots()
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	s.Start()
	if e.coord != nil {
		// After the earlier owner's runs have ended: run keys this journal's earlier owners
		// left on the hub are then known to be over, and are taken back (docs/design.md#9-devices).
		if err := e.coord.Start(e.j.ID(), e.gate.Epoch(), e.settleElsewhere, e.moveAnchor); err != nil {
			_ = s.Shutdown()
			e.mu.Lock()
			e.stopping = true
			e.mu.Unlock()
			close(e.bgStop)
			return fmt.Errorf("start: hub: %w", err)
		}
	}
	if err := e.applyInZone(cfg); err != nil {
		if e.coord != nil {
			e.coord.Stop()
		}
		_ = s.Shutdown()
		e.mu.Lock()
		e.stopping = true // a failed Start leaves nothing running; Stop is then a no-op
		e.mu.Unlock()
		close(e.bgStop)
		return fmt.Errorf("start: %w", err)
	}
	e.mu.Lock()
	e.broken = broken
	e.mu.Unlock()
	if broken == nil {
		e.saveLastGood(cfg)
	}
	if e.afterArm != nil {
		e.afterArm()
	}
	e.pendStartPass(last)
	e.runStartPass()
	// Retention also runs once at start, in the background, for routines far past keep_runs:
	// a journal that grew while keep_runs was larger shrinks without waiting for each
	// routine's next run. A few extra rows are left to the retention after each run.
	keep := make(map[string]int, len(cfg.Routines))
	for _, r := range cfg.Routines {
		keep[r.Name] = r.KeepRuns
	}
	e.j.PruneAllLater(keep, startPruneExcess)
	if watchErr != nil {
		e.log.Warn("routines.toml changes will not apply until restart", "err", watchErr)
	} else {
		watching = true
		e.background(func(stop <-chan struct{}) { e.watchConfig(watch, stop) })
	}
	e.background(e.watchWake)
	// The watch is set up before Start returns, so a write made after it (a `run --here` in this
	// process) is always reported.
	changes := e.watchJournalFiles(e.bgStop)
	e.background(func(stop <-chan struct{}) { e.pollRequests(changes, stop) })
	e.background(e.watchJournal)
	return nil
}

func (e *Engine) background(loop func(stop <-chan struct{})) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		loop(e.bgStop)
	}()
}

// Stop stops admitting runs (no new run starts), stops the timers and watchers and waits for
// in-flight runs to end. When ctx ends first it cancels the remaining runs (their processes
// get SIGTERM then SIGKILL; they are recorded `interrupted`), waits for them to be recorded
// and returns ctx's error. Slots the journal refused are written one last time (logged when
// it still refuses).
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	if e.stopping {
		e.mu.Unlock()
		return nil
	}
	e.stopping = true
	s := e.sched
	close(e.bgStop)
	e.mu.Unlock()
	if s != nil {
		if err := s.Shutdown(); err != nil {
			e.log.Warn("gocron shutdown", "err", err)
		}
	}
	e.bg.Wait()
	drained := make(chan struct{})
	go func() { e.runs.Wait(); close(drained) }()
	// The hub session ends once no run is in flight: the liveness key goes last.
	if e.coord != nil {
		defer e.coord.Stop()
	}
	select {
	case <-drained:
		e.cancelRun()
		e.abandonUnrecorded()
		return nil
	case <-ctx.Done():
		e.cancelRun()
		<-drained
		e.abandonUnrecorded()
		return fmt.Errorf("stop: runs still in flight: %w", ctx.Err())
	}
}

// Routines returns the current state of every routine, disabled ones included (with their
// validation message), with the running flag from this process.
func (e *Engine) Routines() []RoutineState {
	e.mu.Lock()
	cfg := e.cfg
	running := map[string]bool{}
	for name, a := range e.routines {
		running[name] = a.running != nil
	}
	e.mu.Unlock()
	states, err := e.looks.States(cfg, e.j, e.clock.Now())
	if err != nil {
		e.log.Warn("routine states", "err", err)
	}
	for i := range states {
		states[i].Running = running[states[i].Name]
	}
	return states
}

// Problems returns the last validation problems of routines.toml (a file that does not parse
// is one problem at its position while the last good set keeps running).
func (e *Engine) Problems() []config.Problem {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken != nil {
		return []config.Problem{*e.broken}
	}
	return append([]config.Problem(nil), e.problems...)
}

// ConfigError returns the problem of a routines.toml that does not parse (or cannot be read)
// while the engine runs the last good version of it; nil while the file in force is the one on
// disk.
func (e *Engine) ConfigError() *config.Problem {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken == nil {
		return nil
	}
	p := *e.broken
	return &p
}

// changed tells EngineOptions.OnChange that the routines' state may have changed.
func (e *Engine) changed() {
	if e.opts.OnChange != nil {
		e.opts.OnChange()
	}
}

// Duplicates returns how many times a slot reached the engine again after it was handled and was
// dropped: handed to dispatch twice (a catch-up pass and a late timer), or its claim refused
// because the slot was claimed already.
func (e *Engine) Duplicates() int64 { return e.duplicates.Load() }

// idle reports whether no run is in flight or waiting (tests and benchmarks poll it).
func (e *Engine) idle() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.routines {
		if a.running != nil || a.pending != nil {
			return false
		}
	}
	return true
}

// nextDue returns the earliest next slot of all armed routines after now (zero if none).
func (e *Engine) nextDue(now time.Time) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	var best time.Time
	for _, a := range e.routines {
		if n := a.sched.Next(now); !n.IsZero() && (best.IsZero() || n.Before(best)) {
			best = n
		}
	}
	return best
}

// noteTick tells the ownership handle one slot was handled and when the next is due. The
// earliest next slot is recomputed at most once a second while it lies ahead (it is for
// diagnosis, and a catch-up over 10,000 routines must not scan them all per slot).
func (e *Engine) noteTick() {
	now := e.clock.Now()
	e.tickMu.Lock()
	if e.due.IsZero() || !e.due.After(now) || time.Since(e.dueAt) > time.Second {
		e.due, e.dueAt = e.nextDue(now), time.Now()
	}
	due := e.due
	e.tickMu.Unlock()
	e.gate.NoteTick(due)
}

// names returns the armed routine names, sorted.
func (e *Engine) names() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.routines))
	for n := range e.routines {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// gateElector lets gocron run jobs only while the ownership handle admits runs.
type gateElector struct{ g Gate }

func (g gateElector) IsLeader(context.Context) error {
	if g.g.Admitting() {
		return nil
	}
	return errNotAdmitting
}
