package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/routinely/routinely/ownership"
)

// onRequest is ownership's OnRequest: called from the heartbeat goroutine, so it only records
// the request and returns. The saved policy answers at once; "ask" shows the prompt and arms
// the deadline, after which an unanswered request is denied.
func (s *Session) onRequest(req ownership.Request) {
	s.mu.Lock()
	policy := s.settings.TakeoverPolicy
	last := req
	s.lastReq = &last
	if policy == ownership.PolicyAsk || policy == "" {
		r := req
		s.pending = &r
	}
	s.mu.Unlock()
	s.logger.Info("takeover requested", "by_pid", req.Requester.PID, "role", req.Requester.Role, "policy", policy)
	switch policy {
	case ownership.PolicyAllow:
		go s.answer(req.ID, true, "policy: always allow")
	case ownership.PolicyDeny:
		go s.answer(req.ID, false, "policy: always deny")
	default:
		time.AfterFunc(time.Until(req.ExpiresAt), func() { s.answer(req.ID, false, "no answer before the deadline") })
	}
	s.poke()
}

// Decide answers the pending takeover request id (the prompt's and the tray's Approve/Deny).
func (s *Session) Decide(id string, approve bool) error {
	return s.answer(id, approve, "user")
}

func (s *Session) answer(id string, approve bool, why string) error {
	s.mu.Lock()
	h := s.handle
	s.mu.Unlock()
	if h == nil {
		s.clearPendingID(id)
		return fmt.Errorf("this app no longer owns the routines: %w", ownership.ErrNoRequest)
	}
	err := h.Decide(id, approve)
	s.clearPendingID(id)
	if err == nil && approve {
		s.mu.Lock()
		if s.lastReq != nil && s.lastReq.ID == id {
			s.yieldedTo = s.lastReq
		}
		s.mu.Unlock()
	}
	if errors.Is(err, ownership.ErrNoRequest) && why != "user" {
		return nil // already answered or withdrawn: the deadline timer has nothing to do
	}
	if err != nil {
		return fmt.Errorf("answer takeover request: %w", err)
	}
	s.logger.Info("takeover answered", "approved", approve, "by", why)
	return nil
}

func (s *Session) clearPendingID(id string) {
	s.mu.Lock()
	if s.pending != nil && s.pending.ID == id {
		s.pending = nil
	}
	s.mu.Unlock()
	s.poke()
}

func (s *Session) clearPending(req *ownership.Request) {
	if req != nil {
		s.clearPendingID(req.ID)
	}
}
