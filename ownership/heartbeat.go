package ownership

import (
	"errors"
	"time"
)

// loop is the heartbeat loop: the owner's only writer of owner.json and takeover.reply.json, and
// the only goroutine that answers takeover requests and lets go of the guard. It runs until the
// handle is lost: every interval it beats; on a file event about takeover.json, a nudge
// (Decide, Release, the last run ending) or the pending request's deadline it looks at takeover
// requests and decisions; while yielding or releasing it completes as soon as no run is in
// flight. It owns w and closes it.
func (h *Handle) loop(w *dirWatcher) {
	defer close(h.loopDone)
	defer w.close()
	h.writeRecord(true) // make the record startOwning wrote durable
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		h.mu.Lock()
		var idle chan struct{} // nil (never ready) unless draining
		if (h.phase == phaseYielding && !h.handoverHeldLocked()) || h.phase == phaseReleasing {
			idle = h.idle
		}
		var expiry <-chan time.Time // nil (never ready) unless a request awaits a decision
		var expiryTimer *time.Timer
		if h.pending != nil {
			// An unanswered request is refused at its deadline, not at the next beat: Pending
			// stops reporting it then, and the prompt showing it goes with it.
			expiryTimer = time.NewTimer(time.Until(h.pending.ExpiresAt))
			expiry = expiryTimer.C
		}
		h.mu.Unlock()
		select {
		case <-expiry:
			h.checkRequest()
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
		if expiryTimer != nil {
			expiryTimer.Stop()
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
// disk, check the journal is (WatchJournal), rewrite the record, look for takeover requests. It returns false when the guard was
// replaced and the handle is lost.
func (h *Handle) beat() bool {
	if err := h.guard.intact(); err != nil {
		h.loseGuard(err)
		return false
	}
	h.checkJournal()
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

// loseGuard handles a deleted or replaced owner.lock (err, from intact): stop admitting and end
// the handle at once, so its user contends again, then let go of the orphaned lock (it guards
// nothing now).
func (h *Handle) loseGuard(err error) {
	h.log.Warn("guard file replaced; stopped admitting runs", "err", err)
	unregister(h.dir)
	h.mu.Lock()
	h.setPhaseLocked(phaseLost, change{err: err, why: "guard replaced"})
	h.mu.Unlock()
	h.logOwnership("released")
	if err := h.guard.release(); err != nil {
		h.log.Warn("unlock of the replaced guard failed; it is freed when this process exits", "err", err)
	}
}

// handoverHeldLocked reports whether an approved takeover must wait although nothing runs: the
// journal is replaced (WatchJournal) and this owner holds the only copy of it until it has put
// it back; a successor now would start an empty journal at the path instead. The challenger
// waits (it owns once the journal is back) or gives up at its deadline, and then this owner
// carries on. Callers hold h.mu.
func (h *Handle) handoverHeldLocked() bool { return h.rec.JournalReplaced != nil }

// finishIfDrained completes a yield or Release once no run is in flight: state "released" is
// written (durably) while the guard is still held, then the guard is unlocked. A yield first
// checks, as late as possible, that its challenger still wants the routines: one that withdrew,
// died or ran out of time would leave them unowned, so the owner drops the request and carries
// on instead. After unlocking for a yield it waits to see the requester own (awaitSuccessor);
// if nobody does, the handle ends with ErrHandoverFailed rather than ErrReleased, so that its
// user takes the routines back. A Release at any point turns the yield into a release. It
// returns true when the handle is gone.
func (h *Handle) finishIfDrained() bool {
	h.mu.Lock()
	req := h.yieldFor
	drained := false
	if h.inFlight == 0 {
		switch h.phase {
		case phaseYielding:
			if h.handoverHeldLocked() {
				break // JournalRestored nudges the loop
			}
			drained = h.setPhaseLocked(phaseHandingOver, change{why: "drained"})
		case phaseReleasing:
			drained = h.setPhaseLocked(phaseReleased, change{why: "drained"})
		}
	}
	h.mu.Unlock()
	if !drained {
		return false
	}
	h.writeRecord(true)
	if h.phaseIs(phaseHandingOver) {
		if why := h.goneReason(req); why != "" {
			h.dropRequest(req, why) // back to owning, unless Release came meanwhile
			removeRequest(h.dir, req.ID)
			if !h.phaseIs(phaseReleased) {
				return false
			}
		}
	}
	h.logOwnership("released")
	if err := h.guard.release(); err != nil {
		// LOCK_UN does not fail on a valid descriptor; if it ever did, the lock would stay held
		// until this process exits: nobody else could own meanwhile, but nobody would own twice.
		h.log.Warn("guard unlock failed; it is freed when this process exits", "err", err)
	}
	unregister(h.dir) // the guard is free: an Acquire in this process may take it now
	why := ErrReleased
	if h.phaseIs(phaseHandingOver) {
		if err := h.awaitSuccessor(req); err != nil {
			why = err
		}
	}
	h.mu.Lock()
	h.setPhaseLocked(phaseLost, change{err: why, why: "guard let go"})
	h.mu.Unlock()
	return true
}
