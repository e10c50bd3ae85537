package session

import (
	"fmt"

	"github.com/routinely/routinely/ownership"
)

// The ownership handle owns every takeover decision: its policy (set from the saved setting,
// SetPolicy), the pending request and its deadline (Handle.Pending), and the answer
// (Handle.Decide). The session only shows the request and passes the person's answer on.

// onRequest is ownership's OnRequest (policy "ask"): called on a goroutine of the handle's, it
// logs the request and republishes at once so that the prompt appears.
func (s *Session) onRequest(req ownership.Request) {
	s.logger.Info("takeover requested", "by_pid", req.Requester.PID, "role", req.Requester.Role)
	s.poke()
}

// Decide answers the pending takeover request id (the prompt's and the tray's Approve/Deny). It
// returns ownership.ErrNoRequest (wrapped) when id is not pending: already answered, withdrawn,
// past its deadline, or this app no longer owns.
func (s *Session) Decide(id string, approve bool) error {
	s.mu.Lock()
	h := s.handle
	s.mu.Unlock()
	if h == nil {
		return fmt.Errorf("this app no longer owns the routines: %w", ownership.ErrNoRequest)
	}
	err := h.Decide(id, approve)
	s.poke()
	if err != nil {
		return fmt.Errorf("answer takeover request: %w", err)
	}
	s.logger.Info("takeover answered", "approved", approve)
	return nil
}
