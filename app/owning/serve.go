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
// (startWhenJournalWritable). It returns nil in these cases and an error only when the routines
// cannot be started (not a journal, config unusable); h is released then too, so the caller
// never has to. When ctx carries WithExitNow's registry, its endRuns ends the engine's runs in
// flight until the engine has stopped.
func Serve(ctx context.Context, h *ownership.Handle, p paths.Paths, n scheduler.Notifier, logger *slog.Logger, hooks Hooks) error {
	if logger == nil {
		logger = slog.Default()
	}
	j, eng, err := startWhenJournalWritable(ctx, h, p, n, logger, hooks.OnChange)
	if err != nil || eng == nil {
		release(h, logger)
		return err
	}
	defer j.Close()
	// An "exit now" (WithExitNow) ends this engine's runs until it has stopped; the journal is
	// still open then (deferred calls run last-in first-out).
	defer register(ctx, eng)()
	logger.Info("owning the routines", "epoch", h.Epoch(), "config", p.Config, "routines", len(eng.Routines()))
	for _, pr := range eng.Problems() {
		logger.Warn("routine disabled", "where", fmt.Sprintf("%s:%d:%d", pr.File, pr.Line, pr.Col), "routine", pr.Routine, "problem", pr.Message)
	}
	if hooks.Started != nil {
		if stopped := hooks.Started(eng); stopped != nil {
			defer stopped() // runs before the deferred j.Close: nobody reads a closed journal
		}
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
		if err := eng.Stop(stopCtx); err != nil {
			logger.Warn("runs still in flight after the drain timeout", "err", err)
		}
		if err := <-released; err != nil && !errors.Is(err, ownership.ErrReleased) {
			logger.Warn("could not release cleanly; exiting drops the guard", "err", err)
		} else {
			logger.Info("released the routines", "epoch", h.Epoch())
		}
	case <-h.Lost():
		// The handle drained and released (takeover) or lost its guard; the engine admits
		// nothing more, so stopping it only ends its timers and watchers.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
		defer cancel()
		if err := eng.Stop(stopCtx); err != nil {
			logger.Warn("stop scheduler after losing ownership", "err", err)
		}
		release(h, logger) // a no-op after a takeover; after a replaced guard it frees the old lock
	}
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
