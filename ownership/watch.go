package ownership

import (
	"log/slog"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// dirWatcher wakes the owner when takeover.json appears, changes or goes, so it answers (or
// notices a withdrawal) within milliseconds instead of at the next heartbeat. Without a file
// watch (fsnotify could not start, e.g. out of inotify instances) it never fires and the
// heartbeat tick is the fallback.
type dirWatcher struct {
	w      *fsnotify.Watcher // nil without a file watch
	events chan struct{}     // one pending wake-up at most (capacity 1)
}

// newDirWatcher watches dir for takeover.json events. It never fails: a watch that cannot start
// is logged and replaced by a watcher that never fires. Call close when done.
func newDirWatcher(dir string, log *slog.Logger) *dirWatcher {
	d := &dirWatcher{events: make(chan struct{}, 1)}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("no file watch; takeover requests are seen on the heartbeat tick", "err", err)
		return d
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		log.Warn("no file watch; takeover requests are seen on the heartbeat tick", "err", err)
		return d
	}
	d.w = w
	go d.forward(log)
	return d
}

// forward turns events about takeover.json into one coalesced wake-up.
func (d *dirWatcher) forward(log *slog.Logger) {
	for {
		select {
		case ev, ok := <-d.w.Events:
			if !ok {
				return
			}
			if filepath.Base(ev.Name) == requestName {
				select {
				case d.events <- struct{}{}:
				default:
				}
			}
		case err, ok := <-d.w.Errors:
			if !ok {
				return
			}
			log.Debug("file watch error", "err", err)
		}
	}
}

// close stops the watch and its forwarding goroutine. It may be called more than once.
func (d *dirWatcher) close() {
	if d.w != nil {
		_ = d.w.Close()
	}
}
