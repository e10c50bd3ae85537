package scheduler

// After a run: failure and recovery alerts without spam, and auto-pause (docs/design.md#59-timeouts-process-groups-and-retries).

import (
	"fmt"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"

	"github.com/routinely/routinely/scheduler/action"
)

// afterRun sends the alert the policy asks for and auto-pauses a routine that kept failing.
func (e *Engine) afterRun(r *config.Routine, res action.Result) {
	if title, body, send := e.alerts.Observe(r.Name, res); send {
		warn := isFailure(res.Outcome) || res.Outcome == action.OutcomeSelectorMissing
		if err := e.notify(title, body, warn); err != nil {
			e.log.Warn("notify", "routine", r.Name, "err", err)
		}
	}
	n := r.AutoPauseAfter
	if n <= 0 || !isFailure(res.Outcome) {
		return
	}
	recent, err := e.j.RecentOutcomes(r.Name, n)
	if err != nil || len(recent) < n {
		return
	}
	for _, o := range recent {
		if !isFailure(o) {
			return
		}
	}
	note := fmt.Sprintf("auto-paused after %d consecutive failures", n)
	if err := e.j.SetPaused(r.Name, note, nil); err != nil {
		e.log.Error("auto-pause", "routine", r.Name, "err", err)
		return
	}
	e.refreshPauses()
	e.log.Warn("routine auto-paused", "routine", r.Name, "note", note)
	_ = e.notify("Routine paused: "+r.Name, note+"; resume it when fixed", true)
}

// notify sends one alert through the engine's Notifier (none: nothing), as a warning when warn
// is set and the Notifier can show one (WarningNotifier). It returns the Notifier's error.
func (e *Engine) notify(title, body string, warn bool) error {
	if e.opts.Notifier == nil {
		return nil
	}
	if w, ok := e.opts.Notifier.(WarningNotifier); ok && warn {
		return w.Warn(title, body)
	}
	return e.opts.Notifier.Notify(title, body)
}

func isFailure(outcome string) bool {
	return outcome == journal.OutcomeFailed || outcome == journal.OutcomeTimeout || outcome == journal.OutcomeCrashed
}
