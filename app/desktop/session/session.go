package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/routinely/routinely/app/autostart"
	"github.com/routinely/routinely/app/owning"
	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
)

// Options wire a Session.
type Options struct {
	Paths    paths.Paths
	Version  string
	Logger   *slog.Logger
	Notifier scheduler.Notifier
	// Publish receives every new snapshot, from the session's refresh goroutine. It must not
	// wait for a window: the desktop updates the tray at once and hands the snapshot to the
	// window process's feed (bridge.Feed), which keeps only the newest for it.
	Publish func(State)
	// Tick is how often the state is refreshed while another process owns (its diagnoses, the
	// stuck-owner countdown) or a takeover request waits (the prompt's countdown); 0 → 1 s.
	Tick time.Duration
	// OwningTick is how often it is refreshed while this app owns and no request waits: its
	// engine tells of every change at once (refreshEvery), so the tick only moves the texts
	// that say "in 4m" or "12m ago" on; 0 → 10 s. Whatever changes the tray's look at once (a
	// takeover request, a change of mode, a notice, an ownership event) publishes at once too.
	OwningTick time.Duration
	// Executable is the binary the login item starts; "" → os.Executable.
	Executable string
	// Autostart manages the login item; the zero Manager is the operating system's own (tests
	// pass one on a temporary directory).
	Autostart autostart.Manager
	// WedgeThreshold is how long an owner must go without a heartbeat before the window offers
	// to end it; 0 → the kill-wedged default (30 s).
	WedgeThreshold time.Duration
}

// Session runs the desktop app's ownership lifecycle. Its exported methods are safe to call
// from any goroutine (the UI calls them) and never wait for the scheduler to drain.
type Session struct {
	opts   Options
	logger *slog.Logger

	mu        sync.Mutex
	mode      Mode
	handle    *ownership.Handle // while owning; it holds the takeover policy and request
	notice    string
	settings  Settings
	autostart bool

	// engMu guards engine, the running scheduler while this app owns: a snapshot holds it for
	// reading while it reads the engine, and the engine is dropped under the write lock before
	// owning.Serve closes the journal the engine reads (and as soon as the owner starts stopping).
	engMu  sync.RWMutex
	engine *scheduler.Engine

	takeBack chan struct{} // a Take back click, consumed by the standby loop
	endStuck chan int      // End the stuck owner (its pid), consumed by the standby loop
	kick     chan struct{} // publish a fresh snapshot now
	obs      *observer
}

// New prepares a session; Run starts it.
func New(opts Options) *Session {
	if opts.Tick == 0 {
		opts.Tick = time.Second
	}
	if opts.OwningTick == 0 {
		opts.OwningTick = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Executable == "" {
		opts.Executable, _ = os.Executable()
	}
	// The login item starts this profile: --home for one chosen with --home or ROUTINELY_HOME.
	opts.Autostart = opts.Autostart.WithHome(opts.Paths.Home)
	s := &Session{opts: opts, logger: opts.Logger, takeBack: make(chan struct{}, 1), endStuck: make(chan int, 1), kick: make(chan struct{}, 1)}
	s.obs = newObserver(opts.Paths)
	settings, err := LoadSettings(opts.Paths.State)
	if err != nil {
		s.logger.Warn("desktop settings unreadable, using defaults", "err", err)
	}
	s.settings = settings
	s.autostart = s.refreshAutostart()
	return s
}

// Run owns the routines whenever it can and observes otherwise, until ctx ends; then it stops
// the scheduler, waits for in-flight runs and releases ownership before returning.
func (s *Session) Run(ctx context.Context) error {
	defer s.logger.Info("desktop session stopped")
	defer s.obs.close()
	refreshDone := make(chan struct{})
	go func() { defer close(refreshDone); s.refreshLoop(ctx) }()
	defer func() { <-refreshDone }()
	for ctx.Err() == nil {
		h, err := s.obtain(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			s.logger.Error("cannot take ownership of the routines", "err", err)
			s.setNotice(fmt.Sprintf("Cannot take ownership: %v", err))
			sleep(ctx, 5*time.Second)
			continue
		}
		s.own(ctx, h)
	}
	return nil
}

// obtain returns a handle that owns: at once when nobody owns, else after standing by.
func (s *Session) obtain(ctx context.Context) (*ownership.Handle, error) {
	h, err := ownership.Acquire(ctx, s.ownershipOptions())
	if !errors.Is(err, ownership.ErrOwned) {
		return h, err
	}
	s.setMode(ModeStandby)
	return s.standby(ctx)
}

// standby waits until the owner goes away, takes over when the person clicks Take back, or
// ends a stuck owner when the person confirms End the stuck owner.
func (s *Session) standby(ctx context.Context) (*ownership.Handle, error) {
	select {
	case <-s.takeBack: // a click from before this standby (a stale menu) is not a request
	default:
	}
	select {
	case <-s.endStuck:
	default:
	}
	for {
		wctx, cancel := context.WithCancel(ctx)
		stop, asked := make(chan struct{}), make(chan standbyAsk, 1)
		go func() {
			select {
			case <-s.takeBack:
				cancel()
				asked <- standbyAsk{takeBack: true}
			case pid := <-s.endStuck:
				cancel()
				asked <- standbyAsk{endPID: pid}
			case <-stop:
				asked <- standbyAsk{}
			}
		}()
		h, err := ownership.Wait(wctx, s.ownershipOptions())
		close(stop)
		cancel()
		ask := <-asked
		if err == nil || ctx.Err() != nil || (!ask.takeBack && ask.endPID == 0) {
			return h, err
		}
		what := "Take back"
		if ask.takeBack {
			h, err = s.takeOver(ctx)
		} else {
			what = "Ending the stuck owner"
			h, err = s.endStuckOwner(ctx, ask.endPID)
		}
		if err == nil || ctx.Err() != nil {
			return h, err
		}
		s.logger.Warn(what+" failed", "err", err)
		s.setMode(ModeStandby)
		s.setNotice(fmt.Sprintf("%s failed: %v", what, err))
	}
}

// standbyAsk is what the person asked of a standby: Take back, or end the stuck owner endPID.
type standbyAsk struct {
	takeBack bool
	endPID   int
}

// takeOver asks the current owner to step aside (its own policy answers). An owner that has
// stopped heartbeating cannot answer: then it fails at once, or as soon as the owner stops
// during the handshake, with errOwnerStuck, rather than waiting out the deadline.
func (s *Session) takeOver(ctx context.Context) (*ownership.Handle, error) {
	if err := s.ownerStuck(); err != nil {
		return nil, err
	}
	s.setMode(ModeTakingBack)
	s.setNotice("Asking the current owner to hand the routines back…")
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-tctx.Done():
				return
			case <-t.C:
				if err := s.ownerStuck(); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	h, err := ownership.Takeover(tctx, s.ownershipOptions(), ownership.TakeoverOptions{
		Reason: "The Routinely desktop app is taking its routines back.",
	})
	if err != nil {
		if cause := context.Cause(tctx); ctx.Err() == nil && errors.Is(cause, errOwnerStuck) {
			return nil, cause
		}
		return nil, fmt.Errorf("take back: %w", err)
	}
	s.setNotice("")
	return h, nil
}

// ownerStuck returns errOwnerStuck (wrapped, naming the owner and its last heartbeat) when the
// observed owner has stopped heartbeating, else nil.
func (s *Session) ownerStuck() error {
	st, err := s.obs.status()
	if err != nil || st.Record == nil || !hasDiagnosis(st, ownership.DiagNotHeartbeating) {
		return nil
	}
	return fmt.Errorf("the owner (pid %d) has not responded since %s, so %w (the banner above offers to end it)",
		st.Record.PID, st.Record.HeartbeatAt.Local().Format(time.TimeOnly), errOwnerStuck)
}

// errOwnerStuck: Take back cannot work, the owner does not answer requests.
var errOwnerStuck = errors.New("it cannot hand the routines back")

// hasDiagnosis reports whether st carries a diagnosis of kind k.
func hasDiagnosis(st ownership.Status, k ownership.DiagnosisKind) bool {
	for _, d := range st.Diagnoses {
		if d.Kind == k {
			return true
		}
	}
	return false
}

// endStuckOwner ends the stuck owner pid by the kill-wedged rules, judged on the observer that
// has watched it since this app stood by, and owns. Errors: those of ownership.EndWedged.
func (s *Session) endStuckOwner(ctx context.Context, pid int) (*ownership.Handle, error) {
	s.setMode(ModeTakingBack)
	s.setNotice(fmt.Sprintf("Ending the stuck owner (pid %d)…", pid))
	s.logger.Warn("ending the stuck owner at the person's request", "pid", pid)
	h, err := ownership.EndWedged(ctx, s.ownershipOptions(), s.obs.owner,
		ownership.EndWedgedOptions{Threshold: s.opts.WedgeThreshold, PID: pid})
	if err != nil {
		return nil, err
	}
	s.setNotice("")
	return h, nil
}

// own runs the routines while h owns; it returns when h is lost (an approved takeover) or ctx
// ends (Quit: owning.Serve drains and releases).
func (s *Session) own(ctx context.Context, h *ownership.Handle) {
	s.mu.Lock()
	s.mode, s.handle, s.notice = ModeOwning, h, ""
	// The setting may have changed since ownershipOptions was read for this handle.
	if err := h.SetPolicy(s.settings.TakeoverPolicy); err != nil {
		s.logger.Warn("takeover policy not applied", "err", err)
	}
	s.mu.Unlock()
	s.poke()
	s.logger.Info("this app owns the routines", "epoch", h.Epoch())
	go s.watchEvents(h)
	served := make(chan struct{})
	go s.dropEngine(ctx, h, served)
	err := owning.Serve(ctx, h, s.opts.Paths, s.opts.Notifier, s.logger, owning.Hooks{
		Started: func(e *scheduler.Engine) func() {
			s.engMu.Lock()
			if ctx.Err() == nil && !isClosed(h.Lost()) { // else dropEngine has run or is about to
				s.engine = e
			}
			s.engMu.Unlock()
			s.poke()
			return s.forgetEngine // waits for a snapshot reading the engine before the journal closes
		},
		OnChange: s.poke, // a run started or ended, a slot was recorded, routines.toml changed, the hub state changed
	})
	close(served)
	s.forgetEngine()
	s.mu.Lock()
	s.handle = nil
	if ctx.Err() == nil {
		s.mode = ModeStandby
	}
	s.mu.Unlock()
	s.poke()
	// After an approval the handle ends only once the requester owns (so going back to Acquire
	// cannot undo the person's choice), or with ErrHandoverFailed when it never took the guard.
	if errors.Is(h.Err(), ownership.ErrHandoverFailed) {
		// The loop in Run owns again at once.
		s.logger.Warn("the approved takeover did not complete; taking the routines back", "err", h.Err())
	}
	if err == nil {
		return
	}
	// The routines could not start (journal or config unusable); owning.Serve has released the
	// handle so another process may try. Say why, and try again once the routines file changes.
	s.logger.Error("cannot run the routines", "err", err)
	s.setNotice(fmt.Sprintf("Cannot run the routines: %v", err))
	s.obs.waitConfigChange(ctx)
}

// dropEngine stops snapshots from reading the engine as soon as it starts stopping (Quit, or the
// handle lost to an approved takeover): owning.Serve closes the engine's journal once the engine
// has stopped, and a snapshot still reading through it would fail ("sql: database is closed")
// and show no routines. Snapshots read the journal through the observer's connection instead.
func (s *Session) dropEngine(ctx context.Context, h *ownership.Handle, served <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-h.Lost():
	case <-served:
	}
	s.forgetEngine()
}

// forgetEngine stops snapshots from reading the engine; it waits for one reading it now.
func (s *Session) forgetEngine() {
	s.engMu.Lock()
	s.engine = nil
	s.engMu.Unlock()
}

// watchEvents logs the handle's events and republishes at once on takeover events, so the
// prompt appears within a second of the request.
func (s *Session) watchEvents(h *ownership.Handle) {
	for ev := range h.Events() {
		switch ev.Kind {
		case ownership.EventWriteFailed, ownership.EventGuardReplaced:
			s.logger.Warn("ownership problem", "event", ev.Kind, "err", ev.Err)
			s.setNotice(fmt.Sprintf("Ownership problem (%s): %v", ev.Kind, ev.Err))
		}
		s.poke()
	}
}

// ownershipOptions are the options of every Acquire, Wait and Takeover: the saved takeover
// policy (SetPolicy changes it on the handle afterwards) and onRequest for "ask".
func (s *Session) ownershipOptions() ownership.Options {
	s.mu.Lock()
	policy := s.settings.TakeoverPolicy
	s.mu.Unlock()
	o := owning.Options(s.opts.Paths, ownership.RoleDesktop, s.opts.Version, policy, s.logger)
	o.OnRequest = s.onRequest
	return o
}

func (s *Session) setMode(m Mode) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
	s.poke()
}

func (s *Session) setNotice(n string) {
	s.mu.Lock()
	s.notice = n
	s.mu.Unlock()
	s.poke()
}

// Refresh publishes a fresh snapshot soon (it does not wait): the desktop calls it when a
// window opens, so the window gets the state at once and then every Tick.
func (s *Session) Refresh() { s.poke() }

// poke asks the refresh loop for a snapshot now, without waiting.
func (s *Session) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
