package ownership

import (
	"errors"
	"time"
)

// loop is the heartbeat loop: the owner's only writer of owner.json and takeover.reply.json, and
// the only goroutine that answers takeover requests and lets go of the guard. It runs until the
// handle is lost: every interval it beats; on a file event about takeover.json or a nudge
// (Decide, Release, the last run ending) it looks at takeover requests and decisions; while
// yielding or releasing it completes as soon as no run is in flight. It owns w and closes it.
func (h *Handle) loop(w *dirWatcher) {
	defer close(h.loopDone)
	defer w.close()
	h.writeRecord(true) // make the record startOwning wrote durable
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		h.mu.Lock()
		var idle chan struct{} // nil (never ready) unless draining
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
		if h.stateUnwritten() {
			// Release started the drain: say so now, not at the next beat, so that status shows
			// "draining" and a new process is told the owner is stopping from the first moment.
			h.writeRecord(true)
		}
	}
}

// stateUnwritten reports whether the record's state has changed since owner.json was last
// written.
func (h *Handle) stateUnwritten() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rec.State != h.writtenState
}

// beat is one heartbeat tick (docs/design.md#34-heartbeat-and-the-owner-record): check the guard is still the file on
// disk, rewrite the record, look for takeover requests. It returns false when the guard was
// replaced and the handle is lost.
func (h *Handle) beat() bool {
	if err := h.guard.intact(); err != nil {
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
// keeps a tick well under a millisecond; state changes are durable. When the atomic write fails
// the record is rewritten in place (writeJSONInPlace): on a full disk that still works, so
// observers keep seeing a live owner, and why it runs nothing, instead of one that looks wedged
// and that `--kill-wedged` would end.
func (h *Handle) writeRecord(durable bool) {
	h.mu.Lock()
	h.rec.HeartbeatAt = time.Now()
	rec := h.recordLocked()
	h.writtenState = rec.State
	h.mu.Unlock()
	err := writeJSONAtomic(h.dir, recordName, rec, durable)
	if err == nil {
		return
	}
	ierr := writeJSONInPlace(h.dir, recordName, rec, durable)
	if ierr == nil {
		h.log.Warn("owner record rewritten in place: a new file cannot be written (disk full?); still owning", "err", err)
		return
	}
	err = errors.Join(err, ierr)
	h.log.Warn("owner record not written; still owning", "err", err)
	h.reportWriteFailure(err)
}

// reportWriteFailure sends EventWriteFailed for err.
func (h *Handle) reportWriteFailure(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.emit(Event{Kind: EventWriteFailed, Err: err})
}

// loseGuard handles a deleted or replaced owner.lock: stop admitting at once, report, let go of
// the orphaned lock (it guards nothing now), and end the handle so its user contends again.
func (h *Handle) loseGuard(err error) {
	h.log.Warn("guard file replaced; stopped admitting runs", "err", err)
	h.mu.Lock()
	h.admitting = false
	h.emit(Event{Kind: EventGuardReplaced, Err: err})
	h.mu.Unlock()
	h.logOwnership("released")
	if err := h.guard.release(); err != nil {
		h.log.Warn("unlock of the replaced guard failed; it is freed when this process exits", "err", err)
	}
	h.close(ErrGuardReplaced)
}

// finishIfDrained completes a yield or Release once no run is in flight: state "released" is
// written (durably) while the guard is still held, then the guard is unlocked. A yield first
// checks, as late as possible, that its challenger still wants the routines: one that withdrew,
// died or ran out of time would leave them unowned, so the owner drops the request and carries
// on instead. After unlocking for a yield it waits to see the requester own (awaitSuccessor);
// if nobody does, the handle ends with ErrHandoverFailed rather than ErrReleased, so that its
// user takes the routines back. It returns true when the handle is gone.
func (h *Handle) finishIfDrained() bool {
	h.mu.Lock()
	yieldFor, releasing := h.yieldFor, h.releasing
	drained := (yieldFor != nil || releasing) && h.inFlight == 0
	if drained {
		h.admitting = false
		h.rec.State = StateReleased
		h.rec.InFlight = 0
	}
	h.mu.Unlock()
	if !drained {
		return false
	}
	h.writeRecord(true)
	if !releasing {
		if why := h.goneReason(yieldFor); why != "" {
			h.dropRequest(yieldFor, why) // back to owning, unless Release came meanwhile
			removeRequest(h.dir, yieldFor.ID)
			return false
		}
	}
	h.logOwnership("released")
	if err := h.guard.release(); err != nil {
		// LOCK_UN does not fail on a valid descriptor; if it ever did, the lock would stay held
		// until this process exits: nobody else could own meanwhile, but nobody would own twice.
		h.log.Warn("guard unlock failed; it is freed when this process exits", "err", err)
	}
	unregister(h.dir) // the guard is free: an Acquire in this process may take it now
	if !releasing {
		if err := h.awaitSuccessor(yieldFor); err != nil {
			h.close(err)
			return true
		}
	}
	h.close(ErrReleased)
	return true
}

// close marks the handle lost: Lost, Events and the OnRequest queue close, and the directory is
// free for another Acquire in this process.
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
	if h.asks != nil {
		close(h.asks)
	}
}
