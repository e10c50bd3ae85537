package ownership

import (
	"fmt"
	"os"
	"time"
)

// checkRequest is the owner's side of the cooperative takeover (docs/design.md#36-takeover-handshake): apply a decision
// Decide or the policy has made, then read takeover.json; forget the request being asked about or
// yielded for if the file no longer holds it; ignore and remove a request that is not valid for
// this owner; answer a new one. Only the heartbeat loop calls it.
func (h *Handle) checkRequest() {
	h.applyDecision()
	req, err := readRequest(h.dir)
	if err != nil {
		// Challengers write atomically, so this was left by hand or by a crash; nobody answers it.
		h.log.Warn("removing unreadable takeover request", "err", err)
		removeRequest(h.dir, "")
		req = nil
	}
	h.mu.Lock()
	current := h.currentRequest()
	h.mu.Unlock()
	if current != nil && (req == nil || req.ID != current.ID) {
		h.dropRequest(current, "withdrawn")
		current = nil
	}
	if current != nil && !time.Now().Before(current.ExpiresAt) {
		// Judged on the copy the owner answered, not the file, which its writer may rewrite
		// under the same id: the loop wakes at this deadline and must find the request gone.
		h.log.Info("ignoring takeover request", "id", current.ID, "reason", "expired")
		h.dropRequest(current, "expired")
		removeRequest(h.dir, current.ID)
		return
	}
	if req == nil {
		return
	}
	if why := h.ignoreReason(req); why != "" {
		h.log.Info("ignoring takeover request", "id", req.ID, "reason", why)
		if current != nil {
			h.dropRequest(current, why) // forget it before the files go, so Decide sees it gone
		}
		removeRequest(h.dir, req.ID)
		return
	}
	h.mu.Lock()
	seen := current != nil || h.denied[req.ID]
	h.mu.Unlock()
	if !seen {
		h.newRequest(req)
	}
}

// currentRequest returns the request being asked about or yielded for. Callers hold h.mu.
func (h *Handle) currentRequest() *Request {
	if h.yieldFor != nil {
		return h.yieldFor
	}
	return h.pending
}

// ignoreReason returns why req must be ignored, or "" when this owner should answer it: it is
// addressed to this owner's token, unexpired, and written by the same user on this host, by a
// requester that is still running.
func (h *Handle) ignoreReason(req *Request) string {
	host := selfHost()
	switch {
	case req.TargetToken != h.token:
		return "addressed to another owner"
	case req.Requester.UID != os.Getuid() || req.writerUID != os.Getuid():
		return "written by another user"
	case req.Requester.Host != host:
		return "written on another host"
	case !time.Now().Before(req.ExpiresAt):
		return "expired"
	case !sameProcess(requesterIdentity(req.Requester)):
		return "requester is gone"
	}
	return ""
}

// goneReason returns why the owner must no longer act on req, which it is asking about or
// yielding for: "withdrawn" when takeover.json no longer holds it (the challenger gave up, or
// another took its place), else a reason from ignoreReason (requester gone, deadline passed). It
// returns "" while req still stands.
func (h *Handle) goneReason(req *Request) string {
	onDisk, err := readRequest(h.dir)
	if err != nil || onDisk == nil || onDisk.ID != req.ID {
		return "withdrawn"
	}
	return h.ignoreReason(onDisk)
}

// newRequest answers "pending" at once (so the challenger can tell its user), reports the
// request, and applies the policy: allow and deny decide here; ask hands the request to
// OnRequest (on its own goroutine, see askUser) and waits for Decide.
func (h *Handle) newRequest(req *Request) {
	h.mu.Lock()
	h.pending = req
	// Written under h.mu once the request is recorded: a challenger that reads "pending" finds
	// the request in Pending, and no Decide can write its answer before this one.
	h.writeReplyLocked(Reply{RequestID: req.ID, Decision: DecisionPending, By: "policy", At: time.Now()})
	if h.phase == phaseOwning { // while releasing, the request is answered all the same
		h.setPhaseLocked(phaseAsking, change{why: "takeover requested"})
	}
	h.emit(Event{Kind: EventTakeoverRequested, Request: req})
	switch h.policy {
	case PolicyAllow, PolicyDeny:
		d := DecisionDenied
		if h.policy == PolicyAllow {
			d = DecisionApproved
		}
		h.decided = &Reply{RequestID: req.ID, Decision: d, By: "policy", At: time.Now()}
	default:
		h.askUser(*req)
	}
	h.mu.Unlock()
	h.applyDecision()
}

// askUser queues req for Options.OnRequest without blocking. Callers hold h.mu.
func (h *Handle) askUser(req Request) {
	if h.asks == nil || h.phase == phaseLost {
		return
	}
	select {
	case h.asks <- req:
	default:
		h.log.Warn("takeover request not handed to OnRequest: it has not returned from earlier ones", "id", req.ID)
	}
}

// deliverAsks calls Options.OnRequest for each queued request, in order, until the handle is
// lost, skipping a request that stopped pending while it waited in the queue (withdrawn,
// expired): nobody should be prompted about it. It runs on its own goroutine so that a callback
// that waits for a person never holds up the heartbeat: a silent heartbeat would look wedged,
// and kill-wedged could end this owner.
func (h *Handle) deliverAsks() {
	for req := range h.asks {
		if p := h.Pending(); p != nil && p.ID == req.ID {
			h.opts.OnRequest(req)
		}
	}
}

// applyDecision writes the reply recorded by Decide or the policy and acts on it: a denial is
// remembered so the same request is not asked again; an approval, if the request still stands,
// stops admitting runs and starts the drain (finishIfDrained releases once nothing is in
// flight). Only the heartbeat loop calls it; it and dropRequest alone change pending and
// yieldFor. While releasing, an approval is written and remembered (yieldFor) but the phase
// stays releasing: the guard goes free anyway, and the challenger's next try takes it.
func (h *Handle) applyDecision() {
	h.mu.Lock()
	d, req := h.decided, h.pending
	h.decided = nil
	h.mu.Unlock()
	if d == nil || req == nil || req.ID != d.RequestID {
		return
	}
	if d.Decision == DecisionApproved {
		// The user may have clicked after the challenger withdrew, died or ran out of time.
		if why := h.goneReason(req); why != "" {
			h.dropRequest(req, why)
			removeRequest(h.dir, req.ID)
			return
		}
	}
	h.mu.Lock()
	h.pending = nil
	switch {
	case d.Decision != DecisionApproved:
		h.denied[req.ID] = true
		if h.phase == phaseAsking { // while releasing, the phase stays
			h.setPhaseLocked(phaseOwning, change{why: "takeover denied"})
		}
	case h.phase == phaseAsking:
		h.setPhaseLocked(phaseYielding, change{req: req, why: "takeover approved"})
	default:
		h.yieldFor = req
	}
	h.emit(Event{Kind: EventTakeoverResolved, Request: req, Reply: d})
	h.mu.Unlock()
	h.log.Info("takeover request answered", "id", req.ID, "decision", d.Decision, "by", d.By)
	h.writeReply(*d)
	if d.Decision == DecisionApproved {
		h.writeRecord(true)
	}
}

// dropRequest forgets a request that was withdrawn, expired or whose requester died. If the
// owner was draining for it, it takes back the schedule: yielding to nobody would leave the
// routines unowned.
func (h *Handle) dropRequest(req *Request, why string) {
	h.mu.Lock()
	resumed := false
	if h.pending != nil && h.pending.ID == req.ID {
		h.pending = nil
		if h.phase == phaseAsking {
			h.setPhaseLocked(phaseOwning, change{why: "takeover request " + why})
		}
	}
	if h.yieldFor != nil && h.yieldFor.ID == req.ID {
		h.yieldFor = nil
		if h.phase == phaseYielding || h.phase == phaseHandingOver {
			resumed = h.setPhaseLocked(phaseOwning, change{why: "takeover request " + why})
		}
	}
	h.emit(Event{Kind: EventTakeoverResolved, Request: req})
	h.mu.Unlock()
	removeReply(h.dir, req.ID)
	h.log.Info("takeover request dropped", "id", req.ID, "reason", why, "resumed", resumed)
	if resumed {
		h.writeRecord(true)
	}
}

// writeReply writes takeover.reply.json; a failure is reported like any write failure.
func (h *Handle) writeReply(r Reply) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writeReplyLocked(r)
}

// writeReplyLocked is writeReply for callers that hold h.mu.
func (h *Handle) writeReplyLocked(r Reply) {
	if err := writeJSONAtomic(h.dir, replyName, r, false); err != nil {
		h.log.Warn("takeover reply not written", "err", err)
		h.emit(Event{Kind: EventWriteFailed, Err: err})
	}
}

// handoverWait bounds how long an owner that let go of the guard for an approved takeover waits
// to see the requester own. A live challenger tries the guard every 50 ms and writes its record
// right after locking it, so a real handover shows within milliseconds; the margin is for a
// loaded machine.
const handoverWait = 5 * time.Second

// awaitSuccessor runs after the guard was unlocked for the approved request req. It returns nil
// once req's requester owns (the guard is held and owner.json names the requester's pid and start
// time), once any process has owned after this one (the durable epoch file moved past this
// owner's epoch: a successor that owned only briefly, or released before this loop looked, still
// took over), or when handoverWait passes with the guard held by anyone (the routines are owned; a
// standby may have won the race). It returns ErrHandoverFailed (wrapped, with the reason) when
// the guard is still free at the deadline, or at once when the requester has exited without
// taking it: a forged request, or a challenger that hung or died after the approval, must not
// leave the routines unowned. A Release meanwhile ends the wait (nil): the process is stopping.
func (h *Handle) awaitSuccessor(req *Request) error {
	want := requesterIdentity(req.Requester)
	deadline := time.Now().Add(handoverWait)
	for {
		if e, err := readEpochFile(h.dir); err == nil && e > h.epoch {
			h.log.Info("handed over", "epoch", e)
			return nil
		}
		held, holder, err := guardHolder(h.dir)
		if err == nil && held {
			if rec, _ := readRecord(h.dir); rec != nil && rec.Token != h.token &&
				sameStart(recordIdentity(rec), want) && (holder == 0 || holder == rec.PID) {
				h.log.Info("handed over", "to_pid", rec.PID, "epoch", rec.Epoch)
				return nil
			}
		}
		var why string
		switch {
		case h.phaseIs(phaseReleased):
			return nil
		case err == nil && !held && !sameProcess(want):
			why = fmt.Sprintf("requester pid %d exited without taking the routines", req.Requester.PID)
		case !time.Now().Before(deadline) && err == nil && held:
			h.log.Warn("the guard is held, but owner.json does not name the approved requester; leaving the routines to the holder",
				"requester_pid", req.Requester.PID, "holder_pid", holder)
			return nil
		case !time.Now().Before(deadline):
			why = fmt.Sprintf("requester pid %d did not take the routines within %s", req.Requester.PID, handoverWait)
		}
		if why != "" {
			h.log.Warn("approved takeover did not complete; the routines are free to take back",
				"request", req.ID, "reason", why)
			return fmt.Errorf("%w: %s", ErrHandoverFailed, why)
		}
		time.Sleep(waitPoll)
	}
}
