//go:build linux

package torture

import (
	"fmt"
	"strings"
	"time"
)

// Evidence is everything the run left behind, gathered after every contender has exited.
type Evidence struct {
	Procs          []ProcRecord
	Events         map[int][]OwnEvent // by ProcRecord.ID
	Stops          []Window
	Effects        []SideEffect
	EffectProblems []string
	Lifetimes      []Lifetime // each run's own start and end stamps (stamps.go)
	StampProblems  []string
	Runs           []JournalRun
	JournalErr     error
	Clock          Clock
	CalmMono       int64 // attacks ended (the span of expected slots ends here)
	EndMono        int64 // shutdown began
}

// Check is the outcome of one invariant.
type Check struct {
	Name       string
	Violations []string
	Notes      []string
}

// Report is the verdict of a run.
type Report struct {
	Checks    []*Check
	Intervals []Interval
	Expected  int     // slots that had to be accounted for
	Ran       int     // of those, how many actually ran
	GapMS     float64 // longest ownerless stretch with a live contender, SIGSTOP windows excluded
}

// Failed reports whether any check found a violation.
func (r *Report) Failed() bool {
	for _, c := range r.Checks {
		if len(c.Violations) > 0 {
			return true
		}
	}
	return false
}

// Outcomes that mean a run's process started, and outcomes that account for a slot.
var (
	executed  = map[string]bool{"success": true, "failed": true, "timeout": true, "crashed": true, "interrupted": true, "running": true, "changed": true, "selector-missing": true}
	accounted = map[string]bool{"skipped": true, "missed": true}
)

// edge is the slack at both ends of the run: a slot in the first or last edge of the span may
// legitimately be handled by nobody yet or still be in flight.
const edge = 2 * time.Second

// fenceSlack allows for a run stamped just as the harness sent SIGKILL.
const fenceSlack = int64(50 * time.Millisecond)

// Verify runs every invariant check over the evidence.
func Verify(ev Evidence) *Report {
	r := &Report{}
	iv, ivProblems := BuildIntervals(ev.Procs, ev.Events, ev.EndMono)
	r.Intervals = iv
	r.Checks = append(r.Checks, checkCrashes(ev), checkExits(ev), checkSlotsOnce(ev), checkOneOwner(iv, ivProblems),
		checkEpochs(ev, iv), checkNoLoss(ev, iv, r), checkAvailability(ev, iv, r), checkNoOverlap(ev))
	return r
}

// slotKey names a routine's slot for maps and messages: "routine@15:04:05.000" (UTC).
func slotKey(routine string, slot time.Time) string {
	return routine + "@" + slot.UTC().Format("15:04:05.000")
}

// describeRuns lists journal rows as "outcome/epoch N/trigger", for violation messages.
func describeRuns(rs []JournalRun) string {
	var parts []string
	for _, jr := range rs {
		parts = append(parts, fmt.Sprintf("%s/epoch %d/%s", jr.Outcome, jr.Epoch, jr.Trigger))
	}
	return strings.Join(parts, ", ")
}

// head joins the first n of xs with spaces, noting how many more were left out.
func head(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, " ")
	}
	return strings.Join(xs[:n], " ") + fmt.Sprintf(" … (+%d)", len(xs)-n)
}
