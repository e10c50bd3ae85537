package ownership

import (
	"time"
)

// loop is the owner's only writer of owner.json and takeover.reply.json. It runs until the handle
// is lost: every interval it beats; on a file event or a nudge it looks at takeover requests and
// decisions; while yielding it waits for the in-flight runs to finish, then releases.
func (h *Handle) loop(w *dirWatcher) {
	defer close(h.loopDone)
	defer w.close()
	h.writeRecord(true)
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		h.mu.Lock()
		var idle chan struct{}
		if h.yieldFor != nil || h.releasing {
			idle = h.idle
		}
		h.mu.Unlock()
		select {
		case <-t.C:
			if !h.beat() {
				return
			}
		case <-w.events:
			h.checkRequest()
		case <-h.wake:
			h.checkRequest()
		case <-idle:
		}
		if h.finishIfDrained() {
			return
		}
	}
}

// beat is one heartbeat tick (DESIGN.md §3 "Heartbeat"): check the guard is still the file on
// disk, rewrite the record, look for takeover requests. It returns false when the guard was
// replaced and the handle is lost.
func (h *Handle) beat() bool {
	if err := h.g.intact(); err != nil {
		h.loseGuard(err)
		return false
	}
	h.writeRecord(false)
	h.checkRequest()
	return true
}

// writeRecord rewrites owner.json with a fresh heartbeat. A failure (disk full, read-only) never
// ends ownership, since the lock still holds; it is logged and sent as EventWriteFailed.
// Heartbeats skip fsync (durable=false): a lost heartbeat after a power cut is harmless, and it
// keeps a tick well under a millisecond; state changes are durable.
func (h *Handle) writeRecord(durable bool) {
	h.mu.Lock()
	h.rec.HeartbeatAt = time.Now()
	rec := h.recordLocked()
	h.mu.Unlock()
	if err := writeJSONAtomic(h.dir, recordName, rec, durable); err != nil {
		h.log.Warn("owner record not written; still owning", "err", err)
		h.mu.Lock()
		h.emit(Event{Kind: EventWriteFailed, Err: err})
		h.mu.Unlock()
	}
}

// loseGuard handles a deleted or replaced owner.lock: stop admitting at once, report, let go of
// the orphaned lock (it guards nothing now), and end the handle so its user contends again.
func (h *Handle) loseGuard(err error) {
	h.log.Warn("guard file replaced; stopped admitting runs", "err", err)
	h.mu.Lock()
	h.admitting = false
	h.emit(Event{Kind: EventGuardReplaced, Err: err})
	h.mu.Unlock()
	_ = h.g.release()
	h.close(ErrGuardReplaced)
}

// finishIfDrained completes a yield or Release once no run is in flight: state "released" is
// written (durably) while the guard is still held, then the guard is unlocked. It returns true
// when the handle is gone.
func (h *Handle) finishIfDrained() bool {
	h.mu.Lock()
	if (h.yieldFor == nil && !h.releasing) || h.inFlight > 0 {
		h.mu.Unlock()
		return false
	}
	h.admitting = false
	h.rec.State = StateReleased
	h.rec.InFlight = 0
	h.mu.Unlock()
	h.writeRecord(true)
	if err := h.g.release(); err != nil {
		// Closing the descriptor (inside release) drops the lock even when LOCK_UN failed.
		h.log.Warn("guard unlock failed", "err", err)
	}
	h.close(ErrReleased)
	return true
}

// close marks the handle lost: Lost and Events close, the directory is free for this process.
func (h *Handle) close(why error) {
	unregister(h.dir)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if why == ErrReleased {
		h.emit(Event{Kind: EventReleased})
	}
	h.lostErr = why
	h.closed = true
	h.pending = nil
	close(h.events)
	close(h.lost)
}
