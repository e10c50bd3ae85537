// Package owning serves this process as the owner, for the daemon and the desktop app alike: open the
// journal, run the scheduler engine while the ownership handle owns, drain and release.
package owning

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/internal/runclock"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/action"
	"github.com/routinely/routinely/scheduler/journal"
)

// DrainTimeout bounds how long Serve waits, after ctx ends, for in-flight runs to finish before
// it gives up (keeping the guard: the process exiting drops it, and the runs become interrupted).
var DrainTimeout = 5 * time.Minute

// Hooks are what the caller of Serve hears of the engine; both are optional.
type Hooks struct {
	// Started is called with the running engine, which may be read until the func Started
	// returns is called (if non-nil): Serve calls it after the engine has stopped and before it
	// closes the journal the engine reads.
	Started func(*scheduler.Engine) (stopped func())
	// OnChange is the engine's scheduler.EngineOptions.OnChange: told, without blocking, that the
	// routines' state may have changed (a run started or ended, a slot was recorded, …), and the
	// hub client's hub.Options.OnChange: what this device sees of the hub changed.
	OnChange func()
}

// Serve runs the routines of profile p while h owns: it opens the journal, starts a
// scheduler.Engine gated by h, calls hooks.Started with the running engine, and returns
// when ctx ends (then it yields at once — owner.json says yielding, status says draining —,
// stops the engine, waits for in-flight runs up to DrainTimeout and releases h) or when h is
// lost (takeover approved: h has already drained and released). While the journal is
// unavailable (locked by another process, disk full) it keeps owning and retries
// (startWhenJournalWritable). When journal.db is deleted or replaced while open (h's heartbeat
// checks it, h.WatchJournal), no run is admitted; once the runs in flight end the engine stops,
// the open journal is put back at its path if that is empty (putJournalBack), and the routines
// start again on it, their catch-up recording the slots due meanwhile; while another file is
// there, nothing runs (status says journal-replaced) until it is moved away. It returns nil in
// these cases and an error only when the routines cannot be started (not a journal, config
// unusable); h is released then too, so the caller never has to. When ctx carries WithExitNow's
// registry, its endRuns ends the running engine's runs in flight until that engine has stopped.
func Serve(ctx context.Context, h *ownership.Handle, p paths.Paths, n scheduler.Notifier, logger *slog.Logger, hooks Hooks) error {
	if logger == nil {
		logger = slog.Default()
	}
	j, eng, err := startWhenJournalWritable(ctx, h, p, n, logger, hooks.OnChange)
	if err != nil || eng == nil {
		release(h, logger)
		return err
	}
	s := &serving{ctx: ctx, hooks: hooks}
	defer s.end()
	defer h.WatchJournal(nil) // the heartbeat checks no journal once this one is closed
	s.start(j, eng)
	logger.Info("owning the routines", "epoch", h.Epoch(), "config", p.Config, "routines", len(eng.Routines()))
	for _, pr := range eng.Problems() {
		logger.Warn("routine disabled", "where", fmt.Sprintf("%s:%d:%d", pr.File, pr.Line, pr.Col), "routine", pr.Routine, "problem", pr.Message)
	}

	for {
		var gone <-chan struct{} // nil (never ready) while no journal is open
		if s.eng != nil {
			gone = h.WatchJournal(s.j.Intact)
		}
		select {
		case <-ctx.Done():
			attrs := []any{"timeout", DrainTimeout}
			if sig := SignalOf(ctx); sig != nil {
				attrs = append(attrs, "signal", SignalName(sig))
			}
			logger.Info("stopping: no new runs; waiting for runs in flight", attrs...)
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
			defer cancel()
			// Yield first, as an approved takeover does: nothing new is admitted from now on and
			// observers see the drain (state yielding) instead of a healthy owner that runs nothing.
			// Release lets the guard go only once the runs in flight have ended.
			released := make(chan error, 1)
			go func() { released <- h.Release(stopCtx) }()
			if s.eng != nil {
				if err := s.eng.Stop(stopCtx); err != nil {
					logger.Warn("runs still in flight after the drain timeout", "err", err)
				}
			}
			if err := <-released; err != nil && !errors.Is(err, ownership.ErrReleased) {
				logger.Warn("could not release cleanly; exiting drops the guard", "err", err)
			} else {
				logger.Info("released the routines", "epoch", h.Epoch())
			}
			return nil
		case <-h.Lost():
			// The handle drained and released (takeover) or lost its guard; the engine admits
			// nothing more, so stopping it only ends its timers and watchers.
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
			defer cancel()
			if s.eng != nil {
				if err := s.eng.Stop(stopCtx); err != nil {
					logger.Warn("stop scheduler after losing ownership", "err", err)
				}
			}
			release(h, logger) // a no-op after a takeover; after a replaced guard it frees the old lock
			return nil
		case <-gone:
			if err := putJournalBack(ctx, h, p, n, logger, s); err != nil {
				s.end()
				release(h, logger)
				return err
			}
		}
	}
}

// serving is what Serve runs: the journal, the engine on it and what hooks.Started returned.
type serving struct {
	ctx     context.Context // Serve's: it may carry WithExitNow's registry
	hooks   Hooks
	j       *journal.Journal
	eng     *scheduler.Engine
	stopped func()
	// unregister takes eng out of ctx's exit-now registry (register); the journal is still open
	// while an "exit now" ends eng's runs.
	unregister func()
}

// start notes that eng runs on j, registers it for an "exit now" and tells hooks.Started.
func (s *serving) start(j *journal.Journal, eng *scheduler.Engine) {
	s.j, s.eng = j, eng
	s.unregister = register(s.ctx, eng)
	if s.hooks.Started != nil {
		s.stopped = s.hooks.Started(eng)
	}
}

// engineStopped tells the hook that the engine has stopped (nobody reads it from now on).
func (s *serving) engineStopped() {
	if s.stopped != nil {
		s.stopped()
		s.stopped = nil
	}
	if s.unregister != nil {
		s.unregister()
		s.unregister = nil
	}
	s.eng = nil
}

// end tells the hook (before the journal the engine reads is closed) and closes the journal.
func (s *serving) end() {
	s.engineStopped()
	if s.j != nil {
		_ = s.j.Close()
		s.j = nil
	}
}

// putJournalBack handles journal.db deleted or replaced while s's engine had it open (h already
// admits nothing, and says journal-replaced): it stops the engine once the runs in flight end
// (their records, and the slots the journal refused meanwhile, go into the open file), then
// puts the open file back at its path (journal.Journal.Restore), every heartbeat interval while
// another file is there, and starts the routines again on it: their start's catch-up records the
// slots due while nothing ran. Putting the open file back rather than starting a new journal
// keeps every claim, epoch and anchor: a new journal would let the next slot of a shifted
// `every` grid or a catch-up run what already ran. It returns nil with s running again, or with
// nothing running when ctx ended, h was lost, or the journal could not be put back (then h keeps
// saying journal-replaced until the owner is stopped). Errors: startWhenJournalWritable's, for
// a start that fails for good.
func putJournalBack(ctx context.Context, h *ownership.Handle, p paths.Paths, n scheduler.Notifier, logger *slog.Logger, s *serving) error {
	why := ""
	if r := h.Record().JournalReplaced; r != nil {
		why = r.Error
	}
	logger.Error("journal.db is not the file this owner has open: no new run starts; the journal is put back once the runs in flight end", "err", why)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
	err := s.eng.Stop(stopCtx)
	cancel()
	if err != nil {
		logger.Warn("runs still in flight after the drain timeout", "err", err)
	}
	s.engineStopped()
	interval := time.Duration(h.Record().HeartbeatIntervalMS) * time.Millisecond
	if interval <= 0 {
		interval = 2 * time.Second
	}
	told := false
	for {
		err := s.j.Restore()
		if err == nil {
			break
		}
		if !errors.Is(err, journal.ErrReplaced) {
			s.j = nil // closed by Restore
			logger.Error("the journal could not be put back: no routine runs until this owner is stopped and started again", "err", err)
			return nil
		}
		if !told {
			logger.Error("another file is at journal.db: no routine runs until it is moved away (then the journal this owner has open is put back), or until this owner is stopped and started again (then that file is used)", "err", err)
			told = true
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-h.Lost():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	s.j = nil
	logger.Warn("journal.db put back from the file this owner had open; starting the routines again", "path", p.Journal)
	h.NoteJournal(time.Time{}, nil) // the stopped engine's word on its journal; the new one reports its own
	h.JournalRestored()
	j, eng, err := startWhenJournalWritable(ctx, h, p, n, logger, s.hooks.OnChange)
	if err != nil || eng == nil {
		return err
	}
	s.start(j, eng)
	return nil
}

// Bounds of the backoff with which an owner retries opening its journal and starting the
// routines while the journal refuses it (another process holds its lock, the disk is full).
var (
	journalRetryMin = 250 * time.Millisecond
	journalRetryMax = 5 * time.Second
)

// startWhenJournalWritable opens the journal and starts the engine on it. While the journal is
// unavailable for a reason that may pass (journal.IsUnavailable), h keeps owning —
// nothing runs, since no run starts without a claim — and owner.json says journal-unwritable
// (h.NoteJournal), from the moment an attempt has waited a second (of running time); it logs and tries again with
// a backoff from 250 ms to 5 s, so a standby that took over from a crashed owner starts the
// routines as soon as the journal is free. The slots due meanwhile are recorded by the start's
// catch-up pass. It returns (nil, nil, nil) when ctx ends or h is lost first, and when a
// takeover approved during the start fenced it (a handover). Errors: a journal that is not one
// (journal.ErrNotJournal), a config the engine cannot start with, a newer owner
// (journal.ErrFenced), wrapped.
func startWhenJournalWritable(ctx context.Context, h *ownership.Handle, p paths.Paths, n scheduler.Notifier, logger *slog.Logger, onChange func()) (*journal.Journal, *scheduler.Engine, error) {
	notes := &journalNotes{h: h}
	wait := journalRetryMin
	for {
		began := time.Now()
		// A second of running time: a stop (SIGSTOP) during the start is not a slow journal.
		attempt := runclock.Start()
		stopSlow := attempt.AfterFunc(time.Second, func() {
			notes.starting(began, errors.New("waiting for the journal to accept writes (another process holds its lock, or the disk is failing)"))
		})
		j, eng, err := startEngine(h, p, n, logger, notes.engine, onChange)
		stopSlow()
		attempt.End()
		if err == nil {
			notes.started(logger)
			return j, eng, nil
		}
		if errors.Is(err, journal.ErrFenced) && !h.Admitting() {
			// A takeover was approved while the routines were starting (nothing ran yet, so the
			// owner let go at once) and the successor's epoch now fences this start: that is a
			// handover, not a failure. The handle ends once the successor owns (or takes the
			// routines back if it never does: ErrHandoverFailed).
			logger.Info("handed over while starting the routines", "epoch", h.Epoch())
			select {
			case <-ctx.Done():
			case <-h.Lost():
			}
			return nil, nil, nil
		}
		if !journal.IsUnavailable(err) {
			return nil, nil, err
		}
		notes.starting(began, err)
		logger.Warn("owning, but the journal is unavailable: no routine runs until it is; trying again", "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, nil
		case <-h.Lost():
			t.Stop()
			return nil, nil, nil
		case <-t.C:
		}
		wait = min(2*wait, journalRetryMax)
	}
}

// journalNotes orders what owner.json says about the journal while the routines start: the
// start's own "unwritable since" (from a timer and the retry loop) until the engine is running,
// then the engine's reports only, so a late timer never overwrites the engine's word.
type journalNotes struct {
	h       *ownership.Handle
	mu      sync.Mutex
	since   time.Time // when the start first found the journal unavailable; zero: never
	running bool      // the engine is started: only it reports from now on
	engined bool      // the engine has reported
}

// starting notes that a start attempt begun at began is waiting for, or was refused by, the
// journal (err), unless the engine already runs.
func (n *journalNotes) starting(began time.Time, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.running || n.engined {
		return
	}
	if n.since.IsZero() {
		n.since = began
	}
	n.h.NoteJournal(n.since, err)
}

// engine is the engine's OnJournal.
func (n *journalNotes) engine(since time.Time, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.engined = true
	n.h.NoteJournal(since, err)
}

// started clears the start's note once the engine runs (unless the engine has spoken since).
func (n *journalNotes) started(logger *slog.Logger) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.running = true
	if n.since.IsZero() {
		return
	}
	logger.Info("the journal accepts writes again; the routines are started", "unavailable_since", n.since)
	if !n.engined {
		n.h.NoteJournal(time.Time{}, nil)
	}
}

// startEngine makes one attempt at opening p's journal and starting an engine gated by h on it,
// reporting journal trouble to onJournal and changes of the routines' state to onChange; on failure nothing is left open. Errors: the
// journal's, the engine's, wrapped.
func startEngine(h *ownership.Handle, p paths.Paths, n scheduler.Notifier, logger *slog.Logger, onJournal func(time.Time, error), onChange func()) (*journal.Journal, *scheduler.Engine, error) {
	coord, err := hubClient(p, h.Record().Version, logger, onChange)
	if err != nil {
		return nil, nil, err
	}
	// An owner killed while putting a deleted journal back leaves the whole copy beside the
	// path: take it, rather than start an empty journal that forgets which slots ran.
	if adopted, err := journal.AdoptRestored(p.Journal); err != nil {
		logger.Warn("an earlier owner's put-back journal is left beside journal.db", "err", err)
	} else if adopted {
		logger.Warn("journal.db put back from the copy an earlier owner made before it stopped", "path", p.Journal)
	}
	j, err := journal.Open(p.Journal)
	if err != nil {
		return nil, nil, fmt.Errorf("open journal %s: %w", p.Journal, err)
	}
	eng, err := scheduler.NewEngine(scheduler.EngineOptions{
		ConfigPath: p.Config, Journal: j, Gate: h, Notifier: n, Logger: logger,
		UserAgent:   action.UserAgent(h.Record().Version),
		OnJournal:   onJournal, // observers say journal-unwritable while claims are refused
		OnChange:    onChange,
		Coordinator: coord,
	})
	if err != nil {
		_ = j.Close()
		return nil, nil, fmt.Errorf("scheduler: %w", err)
	}
	// The engine's goroutines live until Stop; no context ends them.
	if err := eng.Start(context.Background()); err != nil {
		_ = j.Close()
		return nil, nil, fmt.Errorf("start routines: %w", err)
	}
	return j, eng, nil
}

// release gives up h after a start failure, bounded so a stuck run cannot hang the caller.
func release(h *ownership.Handle, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Release(ctx); err != nil && !errors.Is(err, ownership.ErrReleased) {
		logger.Warn("release after failed start", "err", err)
	}
}
