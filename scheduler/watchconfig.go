package scheduler

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadDebounce lets an editor finish writing (several events) before the file is re-read.
const reloadDebounce = 150 * time.Millisecond

// watchConfig watches routines.toml's directory (editors replace files by rename, which a
// watch on the file itself would lose) and re-applies the file after each change.
func (e *Engine) watchConfig(stop <-chan struct{}) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		e.log.Error("config watch", "err", err)
		return
	}
	defer func() { _ = w.Close() }()
	dir, base := filepath.Split(e.opts.ConfigPath)
	if dir == "" {
		dir = "."
	}
	if err := w.Add(dir); err != nil {
		e.log.Error("config watch", "dir", dir, "err", err)
		return
	}
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
// reported while the valid ones run. New slots of added routines are armed from now.
func (e *Engine) Reload() {
	cfg, err := LoadConfig(e.opts.ConfigPath)
	if err != nil {
		e.log.Warn("routines.toml not applied; the last good set keeps running", "err", err)
		e.mu.Lock()
		e.problems = []Problem{problemOf(e.opts.ConfigPath, err)}
		e.mu.Unlock()
		return
	}
	e.mu.Lock()
	stopping := e.stopping
	e.mu.Unlock()
	if stopping {
		return
	}
	if err := e.apply(cfg); err != nil {
		e.log.Error("apply routines.toml", "err", err)
		return
	}
	e.log.Info("routines.toml applied", "routines", len(cfg.Routines), "problems", len(cfg.Problems))
}

// problemOf turns a LoadConfig error into a Problem at its position.
func problemOf(path string, err error) Problem {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce.Problem
	}
	return Problem{File: path, Message: err.Error()}
}
