package scheduler

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"

	"github.com/fsnotify/fsnotify"
)

// reloadDebounce lets an editor finish writing (several events) before the file is re-read.
const reloadDebounce = 150 * time.Millisecond

// openConfigWatch watches routines.toml's directory (editors replace files by rename, which a
// watch on the file itself would lose). Start opens it before it reads the file, so no edit is
// missed.
func (e *Engine) openConfigWatch() (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("config watch: %w", err)
	}
	dir := filepath.Dir(e.opts.ConfigPath)
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("config watch %s: %w", dir, err)
	}
	return w, nil
}

// watchConfig re-applies routines.toml after each change seen by w, debounced.
func (e *Engine) watchConfig(w *fsnotify.Watcher, stop <-chan struct{}) {
	defer func() { _ = w.Close() }()
	base := filepath.Base(e.opts.ConfigPath)
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-stop:
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if filepath.Base(ev.Name) != base {
				continue
			}
			if timer != nil {
				timer.Stop()
			}
			timer = time.NewTimer(reloadDebounce)
			fire = timer.C
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			e.log.Warn("config watch", "err", err)
		case <-fire:
			fire = nil
			e.Reload()
		}
	}
}

// Reload re-reads routines.toml and applies it. A file that does not parse keeps the last good
// set running and becomes the only problem reported; invalid routines are disabled and
// reported while the valid ones run. New slots of added routines are armed from now. While the
// start's catch-up pass is pending (the owner yielded before it), the change waits and applies
// right after that pass (runStartPass), which must see the schedules the slots were missed
// under.
func (e *Engine) Reload() {
	defer e.changed()
	e.mu.Lock()
	wait := e.startLast != nil
	if wait {
		e.reloadDeferred = true
	}
	e.mu.Unlock()
	if wait {
		e.log.Info("routines.toml changed; it applies once this owner admits runs again and has caught up")
		return
	}
	cfg, err := config.LoadConfig(e.opts.ConfigPath)
	if err != nil {
		e.log.Warn("routines.toml not applied; the last good set keeps running", "err", err)
		p := config.ProblemOf(e.opts.ConfigPath, err)
		e.mu.Lock()
		e.broken = &p
		e.mu.Unlock()
		return
	}
	e.mu.Lock()
	stopping := e.stopping
	e.mu.Unlock()
	if stopping {
		return
	}
	if err := e.applyInZone(cfg); err != nil {
		e.log.Error("apply routines.toml", "err", err)
		return
	}
	e.saveLastGood(cfg) // first: once the file is said to be in force, the journal has it
	e.mu.Lock()
	e.broken = nil
	e.mu.Unlock()
	e.log.Info("routines.toml applied", "routines", len(cfg.Routines), "problems", len(cfg.Problems))
}

// saveLastGood records cfg, which this owner has just applied, as the last good routines file
// (journal.SaveLastGood; unchanged contents are not written again). A failure is logged: the
// set runs all the same, and only observers and the next owner miss it.
func (e *Engine) saveLastGood(cfg *config.Config) {
	snap := cfg.Snapshot()
	if snap.Data == nil {
		return
	}
	if err := e.j.SaveLastGood(snap, e.clock.Now()); err != nil {
		e.log.Warn("could not record the last good routines.toml in the journal", "err", err)
	}
}

// LoadOrLastGood loads the routines file at path; when it cannot be used (it does not parse, is
// missing or unreadable) it falls back on LastGoodFor. This is the one rule for "the set in
// force while routines.toml is broken": the engine starts with it, and status, routines and the
// desktop app show it. j may be nil (no journal yet). Errors: the LoadConfig error when there is
// no last good version to fall back on.
func LoadOrLastGood(path string, j *journal.Journal) (cfg *config.Config, broken *config.Problem, lastGood *journal.LastGood, err error) {
	cfg, err = config.LoadConfig(path)
	if err == nil {
		return cfg, nil, nil, nil
	}
	if cfg, broken, lastGood = LastGoodFor(path, j, err); cfg == nil {
		return nil, nil, nil, err
	}
	return cfg, broken, lastGood, nil
}

// LastGoodFor is the set in force when the routines file at path cannot be used (loadErr says
// why: it does not parse, is missing or unreadable): the last good version an owner recorded
// for path in j (nil when j is nil, none is recorded, or it no longer parses), with loadErr as
// the file's problem (broken) and the record.
func LastGoodFor(path string, j *journal.Journal, loadErr error) (cfg *config.Config, broken *config.Problem, lastGood *journal.LastGood) {
	if j == nil || loadErr == nil {
		return nil, nil, nil
	}
	lg, err := j.LastGood()
	if err != nil || lg == nil || lg.Config.Path != path {
		return nil, nil, nil
	}
	good, err := config.FromSnapshot(lg.Config)
	if err != nil {
		return nil, nil, nil
	}
	p := config.ProblemOf(path, loadErr)
	return good, &p, lg
}
