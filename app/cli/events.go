package cli

import (
	"sync"
	"time"

	"github.com/routinely/routinely/ownership"
)

// watchEvents logs the handle's events and returns a function reporting the last takeover or
// guard event, which tells runDaemon why ownership ended.
func watchEvents(e *env, h *ownership.Handle) func() ownership.Event {
	var mu sync.Mutex
	var last ownership.Event
	ch := h.Events()
	if ch == nil {
		return func() ownership.Event { return ownership.Event{} }
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range ch {
			logEvent(e, ev)
			switch ev.Kind {
			case ownership.EventGuardReplaced, ownership.EventTakeoverResolved:
				mu.Lock()
				last = ev
				mu.Unlock()
			}
		}
	}()
	return func() ownership.Event {
		// The channel closes after release; give the last events a moment to arrive.
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// logEvent writes one ownership event to the daemon log.
func logEvent(e *env, ev ownership.Event) {
	l := e.logger
	switch ev.Kind {
	case ownership.EventTakeoverRequested:
		if r := ev.Request; r != nil {
			l.Info("takeover requested", "by_role", r.Requester.Role, "by_pid", r.Requester.PID, "by_host", r.Requester.Host, "reason", r.Reason)
		}
	case ownership.EventGuardReplaced:
		l.Error("owner.lock was deleted or replaced; no new runs", "err", ev.Err)
	case ownership.EventWriteFailed:
		l.Warn("could not write owner.json (ownership continues)", "err", ev.Err)
	case ownership.EventYielding:
		l.Info("yielding: no new runs; waiting for runs in flight")
	case ownership.EventReleased:
		l.Debug("released ownership") // ownership and owning.Serve log it at info already
	default:
		l.Debug("ownership event", "kind", ev.Kind)
	}
}
