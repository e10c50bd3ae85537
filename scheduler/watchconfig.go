package scheduler

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/routinely/routinely/scheduler/config"

	"github.com/fsnotify/fsnotify"
)

// reloadDebounce lets an editor finish writing (several events) before the file is re-read.
const reloadDebounce = 150 * time.Millisecond

// openConfigWatch watches routines.toml's directory (editors replace files by rename, which a
// watch on the file itself would lose). It is set up before Start returns so no edit is missed.
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
		e.mu.Lock()
		e.problems = []config.Problem{problemOf(e.opts.ConfigPath, err)}
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
	e.log.Info("routines.toml applied", "routines", len(cfg.Routines), "problems", len(cfg.Problems))
}

// problemOf turns a LoadConfig error into a Problem at its position.
func problemOf(path string, err error) config.Problem {
	var ce *config.ConfigError
	if errors.As(err, &ce) {
		return ce.Problem
	}
	return config.Problem{File: path, Message: err.Error()}
}
