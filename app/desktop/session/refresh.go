package session

import (
	"context"
	"time"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/ownership"
)

// refreshLoop publishes a snapshot every tick and whenever poke asks, until ctx ends.
func (s *Session) refreshLoop(ctx context.Context) {
	t := time.NewTicker(s.opts.Tick)
	defer t.Stop()
	for {
		s.publish()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
	}
}

func (s *Session) publish() {
	if s.opts.Publish != nil {
		s.opts.Publish(s.Snapshot())
	}
}

// Snapshot builds the state the window and tray show now.
func (s *Session) Snapshot() State {
	now := time.Now()
	s.mu.Lock()
	st := State{
		Mode: s.mode, Now: now, ConfigPath: s.opts.Paths.Config, Notice: s.notice,
		Policy: s.settings.TakeoverPolicy, AutoStart: s.autostart,
	}
	h := s.handle
	s.mu.Unlock()
	if h != nil { // the handle answers requests: show its policy and its pending request
		st.Policy, st.Pending = h.Policy(), h.Pending()
	}

	status, err := s.obs.status()
	st.Owner = status
	if err != nil && st.Notice == "" {
		st.Notice = err.Error()
	}
	st.Hub = ownersHub(s.opts.Paths.State, status)
	if h != nil {
		rec := h.Record()
		st.Self = &rec
	}
	s.engMu.RLock()
	if s.engine != nil {
		st.Routines, st.Problems = s.engine.Routines(), s.engine.Problems()
		s.engMu.RUnlock()
		return st
	}
	s.engMu.RUnlock()
	st.Routines, st.Problems, st.ConfigErr = s.obs.routines(now)
	return st
}

// ownersHub returns the hub state the live owner of stateDir wrote (hub.json), nil when there
// is no owner, no hub.json, or it is another process's.
func ownersHub(stateDir string, owner ownership.Status) *hub.State {
	if !owner.Held || owner.Record == nil {
		return nil
	}
	hs, err := hub.ReadState(stateDir)
	if err != nil || hs.PID != owner.Record.PID {
		return nil
	}
	return &hs
}
