package action

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// `notify_on` kinds (routines.toml).
const (
	NotifyOnSuccess = "success" // every successful run (success or changed)
	NotifyOnFailure = "failure" // first failure, recovery, selector-missing streaks
	NotifyOnChange  = "change"  // every page-watch change
)

// DefaultNotifyOn applies to routines without `notify_on`: failure alerts and page changes,
// which a person wants without configuring anything.
var DefaultNotifyOn = []string{NotifyOnFailure, NotifyOnChange}

// Alerts decides which run results become notifications, without spam: one
// notification on the first failure of an episode and one on recovery, none while a routine
// keeps failing; a page watch's selector-missing is notified once when it happens
// SelectorMissingAlertAfter times in a row (and once when the selector matches again); page
// changes and successes notify when the routine's notify_on asks for them.
//
// Failures are OutcomeFailed, OutcomeTimeout and OutcomeCrashed; OutcomeSuccess and
// OutcomeChanged end a failure episode; a selector-missing run neither starts nor ends one.
// Other outcomes (interrupted, skipped, missed, ...) are ignored.
//
// State is per routine and in memory; Seed restores it from the journal after a restart or an
// ownership handoff. Alerts is safe for concurrent use.
type Alerts struct {
	mu        sync.Mutex
	defaults  []string
	notifyOn  map[string][]string
	routines  map[string]*alertState
	maxDetail int
}

type alertState struct {
	failing  bool // inside a failure episode (its first failure was announced)
	failures int  // consecutive failures
	missing  int  // consecutive selector-missing runs
}

// NewAlerts returns an Alerts whose routines use notifyOn unless SetNotifyOn overrides it for one.
// notifyOn nil means DefaultNotifyOn; an empty non-nil slice means no notifications at all.
func NewAlerts(notifyOn []string) *Alerts {
	if notifyOn == nil {
		notifyOn = DefaultNotifyOn
	}
	return &Alerts{
		defaults:  slices.Clone(notifyOn),
		notifyOn:  map[string][]string{},
		routines:  map[string]*alertState{},
		maxDetail: 3,
	}
}

// SetNotifyOn sets routine's own notify_on list (nil: back to the NewAlerts default).
func (a *Alerts) SetNotifyOn(routine string, notifyOn []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if notifyOn == nil {
		delete(a.notifyOn, routine)
		return
	}
	a.notifyOn[routine] = slices.Clone(notifyOn)
}

// Observe records res as routine's latest run and returns the notification to show, if any
// (send false: show nothing).
func (a *Alerts) Observe(routine string, res Result) (title, body string, send bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.state(routine)
	wants := func(kind string) bool {
		list, ok := a.notifyOn[routine]
		if !ok {
			list = a.defaults
		}
		return slices.Contains(list, kind)
	}
	switch res.Outcome {
	case OutcomeFailed, OutcomeTimeout, OutcomeCrashed:
		st.failures++
		if st.failing {
			return "", "", false
		}
		st.failing = true
		if !wants(NotifyOnFailure) {
			return "", "", false
		}
		return routine + " failed", failureBody(res), true

	case OutcomeSelectorMissing:
		st.missing++
		if st.missing != SelectorMissingAlertAfter || !wants(NotifyOnFailure) {
			return "", "", false
		}
		return routine + ": selector matches nothing", joinLines([]string{
			fmt.Sprintf("Nothing matched %d runs in a row; the page may have changed its layout.", st.missing),
			res.Summary}), true

	case OutcomeSuccess, OutcomeChanged:
		recovered, failures := st.failing, st.failures
		refound := st.missing >= SelectorMissingAlertAfter
		st.failing, st.failures, st.missing = false, 0, 0

		var lines []string
		if res.Outcome == OutcomeChanged {
			lines = append(lines, changeBody(res, a.maxDetail))
		} else if res.Summary != "" {
			lines = append(lines, res.Summary)
		}
		switch {
		case recovered && wants(NotifyOnFailure):
			head := fmt.Sprintf("Succeeded again after %d failed run", failures)
			if failures != 1 {
				head += "s"
			}
			return routine + " recovered", joinLines(append([]string{head + "."}, lines...)), true
		case refound && wants(NotifyOnFailure):
			return routine + ": selector matches again", joinLines(lines), true
		case res.Outcome == OutcomeChanged && wants(NotifyOnChange):
			return routine + " changed", joinLines(lines), true
		case wants(NotifyOnSuccess):
			return routine + " succeeded", joinLines(lines), true
		}
	}
	return "", "", false
}

// Seed replaces routine's state with what its recent outcomes imply, without notifying.
// newestFirst lists outcome strings newest first, as Journal.History returns runs; about
// SelectorMissingAlertAfter+auto-pause-limit runs are plenty. After Seed, a routine that was
// failing does not announce its next failure again, and one whose selector was already reported
// missing is not reported again.
func (a *Alerts) Seed(routine string, newestFirst []string) {
	a.mu.Lock()
	delete(a.routines, routine)
	a.mu.Unlock()
	for i := len(newestFirst) - 1; i >= 0; i-- {
		a.Observe(routine, Result{Outcome: newestFirst[i]})
	}
}

// ConsecutiveFailures returns how many failures routine has had in a row (for auto-pause).
func (a *Alerts) ConsecutiveFailures(routine string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state(routine).failures
}

// Forget drops routine's state (the routine was removed from the configuration).
func (a *Alerts) Forget(routine string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.routines, routine)
	delete(a.notifyOn, routine)
}

func (a *Alerts) state(routine string) *alertState {
	st, ok := a.routines[routine]
	if !ok {
		st = &alertState{}
		a.routines[routine] = st
	}
	return st
}

// failureBody is the Summary (or the outcome) and, when it adds something, the last non-blank
// line of the output, which for a command is usually the error it printed.
func failureBody(res Result) string {
	head := res.Summary
	if head == "" {
		head = res.Outcome
	}
	lines := strings.Split(strings.TrimSpace(string(res.Output)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" || strings.Contains(head, last) {
		return head
	}
	return head + "\n" + cut(last, 120)
}
