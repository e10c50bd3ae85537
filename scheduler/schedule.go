package scheduler

import (
	"fmt"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// cronAdapter lets gocron arm a routine with our slot computation (gocron.WithCronImplementation).
// Its timer fires lead before each slot (claimLead: fire maps the early timer to its slot, the
// claim is written during the lead and the run starts at the slot).
type cronAdapter struct {
	s    config.Schedule
	lead time.Duration
}

func (a cronAdapter) IsValid(string, *time.Location, time.Time) error { return nil }

// Next returns the first fire time (slot - lead) strictly after t, in UTC. gocron passes the
// previous fire time when it re-arms a job. (UTC because gocron takes a next run whose wall
// clock fields equal the previous one's, to the second, for a DST repeat and skips it: in two
// zones that can happen by accident.)
//
// It never returns zero: when arming a job gocron loops `for next.Before(now) { next = Next(next) }`,
// and the zero time is before every now, so a schedule without slots spun that loop at 100 % CPU
// inside gocron's scheduler goroutine, stalling every routine and Stop. Without a slot within
// the horizon it returns t + config.SlotHorizonYears instead: that timer's fire finds no slot and
// does nothing.
func (a cronAdapter) Next(t time.Time) time.Time {
	slot := a.s.Next(t.Add(a.lead))
	if slot.IsZero() {
		return t.AddDate(config.SlotHorizonYears, 0, 0).UTC()
	}
	return slot.Add(-a.lead).UTC()
}

// startsAtOnce reports whether a job armed at now must fire at once (gocron
// WithStartImmediately) so that fire handles its first slot: the slot's fire time has passed (it
// is within the lead) or falls in now's second (gocron would take it for a DST repeat of now and
// skip it). A job's later fire times are at least a second apart, so that happens only here.
func (a cronAdapter) startsAtOnce(now time.Time) bool {
	slot := a.s.Next(now)
	if slot.IsZero() {
		return false
	}
	at := slot.Add(-a.lead)
	return !at.After(now) || at.Unix() == now.Unix()
}

// Preview returns the next n slots of r strictly after from, computed by the schedule value
// that is handed to gocron when the routine is armed. For `every` routines with no Anchor the
// grid starts at from (as arming at from would). It returns an error for a nil routine or
// n < 0.
func Preview(r *config.Routine, from time.Time, n int) ([]time.Time, error) {
	if r == nil || r.Kind == "" {
		return nil, fmt.Errorf("preview: %w", config.ErrUnknownRoutine)
	}
	if n < 0 {
		return nil, fmt.Errorf("preview: negative count %d", n)
	}
	s := r.Slots(from)
	out := make([]time.Time, 0, n)
	for t := from; len(out) < n; {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t.In(r.Location))
	}
	return out, nil
}

// PreviewArmed returns the next n slots of r strictly after from as its owner runs them:
// Preview of r with the `every` grid anchor the owner persisted when it armed r (kept while the
// interval stays the same), so an observer lists the instants the owner's timers fire at, not a
// grid counted from from. With no persisted anchor (j is nil because no journal exists yet,
// nothing armed r yet, or its interval changed since) the grid starts at from, as arming at from
// would start it. r is not modified. Errors: Preview's; the journal query error, wrapped.
func PreviewArmed(j *journal.Journal, r *config.Routine, from time.Time, n int) ([]time.Time, error) {
	if j != nil && r != nil {
		anchored, err := j.Anchored(r)
		if err != nil {
			return nil, fmt.Errorf("preview: %w", err)
		}
		r = anchored
	}
	return Preview(r, from, n)
}
