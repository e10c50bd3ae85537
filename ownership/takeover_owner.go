package ownership

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// checkRequest is the owner's side of the cooperative takeover (DESIGN.md §3): read
// takeover.json, drop it unless it is valid for this owner, write an immediate "pending" reply,
// apply the policy or the user's decision, and start yielding on approval. Only the heartbeat
// loop calls it.
func (h *Handle) checkRequest() {
	h.applyDecision()
	req, err := readRequest(h.dir)
	if err != nil {
		h.log.Warn("removing unreadable takeover request", "err", err)
		removeRequest(h.dir, "")
		return
	}
	h.mu.Lock()
	current := h.current()
	h.mu.Unlock()

	if req == nil || (current != nil && req.ID != current.ID) {
		if current != nil {
			h.dropRequest(current, "withdrawn")
		}
		if req == nil {
			return
		}
	}
	if why := h.invalid(req); why != "" {
		h.log.Info("ignoring takeover request", "id", req.ID, "reason", why)
		h.mu.Lock()
		cur := h.current()
		h.mu.Unlock()
		if cur != nil && cur.ID == req.ID {
			h.dropRequest(cur, why) // forget it before the files go, so Decide sees it gone
		}
		removeRequest(h.dir, req.ID)
		return
	}
	h.mu.Lock()
	seen := h.answered[req.ID] || (current != nil && current.ID == req.ID)
	h.mu.Unlock()
	if seen {
		return
	}
	h.newRequest(req)
}

// current returns the request being asked about or yielded for. Callers hold h.mu.
func (h *Handle) current() *Request {
	if h.yieldFor != nil {
		return h.yieldFor
	}
	return h.pending
}

// invalid returns why req must be ignored, or "" when this owner should answer it: addressed to
// this owner's token, unexpired, written by the same user on this host, by a live requester.
func (h *Handle) invalid(req *Request) string {
	_, host := self()
	switch {
	case req.TargetToken != h.token:
		return "addressed to another owner"
	case req.Requester.UID != os.Getuid() || requestFileUID(h.dir) != os.Getuid():
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

// newRequest answers "pending" at once (so the challenger can tell its user), reports the
// request, and applies the policy.
func (h *Handle) newRequest(req *Request) {
	h.writeReply(Reply{RequestID: req.ID, Decision: DecisionPending, By: "policy", At: time.Now()})
	h.mu.Lock()
	h.pending = req
	h.emit(Event{Kind: EventTakeoverRequested, Request: req})
	h.mu.Unlock()
	switch h.opts.Policy {
	case PolicyAllow, PolicyDeny:
		h.mu.Lock()
		h.decided = &Reply{RequestID: req.ID, Decision: DecisionDenied, By: "policy", At: time.Now()}
		if h.opts.Policy == PolicyAllow {
			h.decided.Decision = DecisionApproved
		}
		h.mu.Unlock()
		h.applyDecision()
	default:
		if h.opts.OnRequest != nil {
			h.opts.OnRequest(*req)
		}
	}
}

// applyDecision writes the reply recorded by Decide or the policy and acts on it: a denial is
// remembered so the same request is not asked again; an approval stops admitting runs and starts
// the drain (finishIfDrained releases once nothing is in flight).
func (h *Handle) applyDecision() {
	h.mu.Lock()
	d, req := h.decided, h.pending
	h.decided = nil
	if d == nil || req == nil || req.ID != d.RequestID {
		h.mu.Unlock()
		return
	}
	if d.Decision == DecisionApproved {
		// The user may have clicked after the requester died or the deadline passed.
		h.mu.Unlock()
		if why := h.invalid(req); why != "" {
			h.dropRequest(req, why)
			removeRequest(h.dir, req.ID)
			return
		}
		h.mu.Lock()
		if h.pending == nil || h.pending.ID != req.ID {
			h.mu.Unlock()
			return
		}
	}
	h.pending = nil
	if d.Decision == DecisionApproved {
		h.admitting = false
		h.yieldFor = req
		h.rec.State = StateYielding
		h.rec.YieldingSince = time.Now()
		h.emit(Event{Kind: EventYielding, Request: req})
	} else {
		h.answered[req.ID] = true
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
	}
	if h.yieldFor != nil && h.yieldFor.ID == req.ID {
		h.yieldFor = nil
		if !h.releasing {
			h.admitting = true
			h.rec.State = StateOwning
			h.rec.YieldingSince = time.Time{}
			resumed = true
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
	if err := writeJSONAtomic(h.dir, replyName, r, false); err != nil {
		h.log.Warn("takeover reply not written", "err", err)
		h.mu.Lock()
		h.emit(Event{Kind: EventWriteFailed, Err: err})
		h.mu.Unlock()
	}
}

// readRequest returns takeover.json, nil when missing, or an error for garbage.
func readRequest(dir string) (*Request, error) {
	var r Request
	err := readJSON(dir, requestName, &r)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case r.ID == "":
		return nil, fmt.Errorf("%s is %w (no id)", filepath.Join(dir, requestName), errGarbage)
	}
	return &r, nil
}

// readReply returns takeover.reply.json or nil when missing or unreadable.
func readReply(dir string) *Reply {
	var r Reply
	if readJSON(dir, replyName, &r) != nil {
		return nil
	}
	return &r
}

// removeRequest deletes takeover.json if it still is request id ("" removes whatever is there):
// the re-read narrows the window in which a newer request could be deleted by mistake.
func removeRequest(dir, id string) {
	if id != "" {
		if r, err := readRequest(dir); err == nil && (r == nil || r.ID != id) {
			return
		}
	}
	_ = os.Remove(filepath.Join(dir, requestName))
	removeReply(dir, id)
}

// removeReply deletes takeover.reply.json if it answers request id ("" removes whatever is there).
func removeReply(dir, id string) {
	if r := readReply(dir); r != nil && id != "" && r.RequestID != id {
		return
	}
	_ = os.Remove(filepath.Join(dir, replyName))
}
