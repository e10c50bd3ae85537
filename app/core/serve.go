// Package core is the owner's lifecycle shared by the daemon and the desktop app: open the
// journal, run the scheduler engine while the ownership handle owns, drain and release.
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/action"
)

// DrainTimeout bounds how long Serve waits, after ctx ends, for in-flight runs to finish before
// it gives up (keeping the guard: the process exiting drops it, and the runs become interrupted).
var DrainTimeout = 5 * time.Minute

// Serve runs the routines of profile p while h owns: it opens the journal, starts a
// scheduler.Engine gated by h, calls started (if non-nil) with the running engine — the engine
// may be read until the func started returns is called (if non-nil), which Serve does after the
// engine has stopped and before it closes the journal the engine reads — and returns
// when ctx ends (then it yields at once — owner.json says yielding, status says draining —,
// stops the engine, waits for in-flight runs up to DrainTimeout and releases h) or when h is
// lost (takeover approved: h has already drained and released). It returns nil in both cases and
// an error only when the routines could not be started (journal or config unusable); h is
// released then too, so the caller never has to.
func Serve(ctx context.Context, h *ownership.Handle, p paths.Paths, n scheduler.Notifier, logger *slog.Logger, started func(*scheduler.Engine) (stopped func())) error {
	if logger == nil {
		logger = slog.Default()
	}
	j, err := scheduler.OpenJournal(p.Journal)
	if err != nil {
		release(h, logger)
		return fmt.Errorf("open journal %s: %w", p.Journal, err)
	}
	defer j.Close()
	eng, err := scheduler.NewEngine(scheduler.EngineOptions{
		ConfigPath: p.Config, Journal: j, Gate: h, Notifier: n, Logger: logger,
		UserAgent: action.UserAgent(h.Record().Version),
	})
	if err != nil {
		release(h, logger)
		return fmt.Errorf("scheduler: %w", err)
	}
	// The engine's goroutines live until Stop; ctx only tells Serve when to stop them.
	engCtx, cancelEng := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelEng()
	if err := eng.Start(engCtx); err != nil {
		release(h, logger)
		return fmt.Errorf("start routines: %w", err)
	}
	logger.Info("owning the routines", "epoch", h.Epoch(), "config", p.Config, "routines", len(eng.Routines()))
	for _, pr := range eng.Problems() {
		logger.Warn("routine disabled", "where", fmt.Sprintf("%s:%d:%d", pr.File, pr.Line, pr.Col), "routine", pr.Routine, "problem", pr.Message)
	}
	if started != nil {
		if stopped := started(eng); stopped != nil {
			defer stopped() // runs before the deferred j.Close: nobody reads a closed journal
		}
	}

	select {
	case <-ctx.Done():
		logger.Info("stopping: no new runs; waiting for runs in flight", "timeout", DrainTimeout)
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

// release gives up h after a start failure, bounded so a stuck run cannot hang the caller.
func release(h *ownership.Handle, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Release(ctx); err != nil && !errors.Is(err, ownership.ErrReleased) {
		logger.Warn("release after failed start", "err", err)
	}
}
