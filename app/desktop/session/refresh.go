package session

import (
	"context"
	"errors"
	"time"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/ownership"
)

// refreshLoop publishes a snapshot every refreshEvery and whenever poke asks, until ctx ends.
func (s *Session) refreshLoop(ctx context.Context) {
	t := time.NewTimer(s.opts.Tick)
	defer t.Stop()
	for {
		s.publish()
		t.Reset(s.refreshEvery())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
	}
}

// refreshEvery is the one rule for how often the state is refreshed: Options.OwningTick while
// this app owns and no takeover request waits for an answer (its notification is withdrawn
// when it expires); Options.Tick otherwise. While this app owns, its engine tells of every
// change of the routines' state and its hub client of every change of the hub state
// (owning.Hooks.OnChange → poke), and nothing the tray or the window shows then counts seconds
// (ui.Relative is in whole minutes; only a gone hub device's "last seen 30s ago" moves in steps
// of the tick), so the tick only moves those texts on: an app owning the routines makes one
// snapshot in ten seconds instead of ten, with or without its window (footprint.sh, README).
func (s *Session) refreshEvery() time.Duration {
	s.mu.Lock()
	h, owning := s.handle, s.mode == ModeOwning
	s.mu.Unlock()
	if owning && h != nil && h.Pending() == nil {
		return s.opts.OwningTick
	}
	return s.opts.Tick
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

	status, err := s.ownerStatus(h)
	st.Owner = status
	if err != nil && st.Notice == "" {
		st.Notice = err.Error()
	}
	st.Hub = ownersHub(s.opts.Paths.State, status)
	if h != nil {
		rec := h.Record()
		st.Self = &rec
	}
	if st.Mode == ModeStandby { // not while taking back or ending it already
		st.Stuck = s.stuckFrom(status)
	}
	s.engMu.RLock()
	if s.engine != nil {
		st.Routines, st.Problems = s.engine.Routines(), s.engine.Problems()
		if p := s.engine.ConfigError(); p != nil {
			st.ConfigProblem, st.ConfigErr, st.LastGood, st.Problems = p, p.String(), true, nil
		}
		s.engMu.RUnlock()
		return st
	}
	s.engMu.RUnlock()
	v := s.obs.routines(now)
	st.Routines, st.Problems, st.ConfigErr, st.ConfigProblem, st.LastGood = v.states, v.problems, v.err, v.broken, v.lastGood
	return st
}

// ownerStatus is ownership as this app shows it: from h's memory while h owns (this app is the
// owner, and looking at the state directory would only read back what it wrote), else what the
// observer sees.
func (s *Session) ownerStatus(h *ownership.Handle) (ownership.Status, error) {
	if h != nil && !isClosed(h.Lost()) {
		return h.Status(), nil
	}
	return s.obs.status()
}

// stuck judges the owner as seen now (see stuckFrom).
func (s *Session) stuck() *StuckOwner {
	status, err := s.obs.status()
	if err != nil {
		return nil
	}
	return s.stuckFrom(status)
}

// stuckFrom describes the owner in status when it has stopped heartbeating: whether and when it
// may be ended from the window, by the kill-wedged rules on this app's observer (the one that
// has watched it); nil when it heartbeats or nobody owns.
func (s *Session) stuckFrom(status ownership.Status) *StuckOwner {
	r := status.Record
	if r == nil || !status.Held || !hasDiagnosis(status, ownership.DiagNotHeartbeating) {
		return nil
	}
	so := &StuckOwner{PID: r.PID, Role: r.Role, Since: r.HeartbeatAt}
	var nw *ownership.NotWedgedError
	switch err := s.obs.owner.CheckWedged(status, s.opts.WedgeThreshold); {
	case err == nil:
	case errors.As(err, &nw) && nw.Left > 0:
		so.EndableIn = nw.Left
	case errors.As(err, &nw):
		so.Refused = nw.Reason
	default:
		so.Refused = err.Error()
	}
	return so
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
