package scheduler

import (
	"fmt"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// States returns what observers show for each routine of cfg at now, from the journal alone
// (used by `routinely status`/`routines` and the app in standby): schedule in words, next slot
// (from the persisted anchor, as the owner armed it; none while paused until resumed, the first
// slot at or after the pause's end when it has one), the oldest past slot nobody has handled
// (Overdue), last run, pause and running flags, and one
// entry per disabled routine with its validation message. j may be nil when no journal exists
// yet (nothing has owned the profile): then nothing has run. cfg is not modified (the engine's
// live set is passed here while runs read it). Errors: journal query errors, wrapped.
func States(cfg *config.Config, j *journal.Journal, now time.Time) ([]RoutineState, error) {
	if cfg == nil {
		return nil, nil
	}
	var pauses map[string]journal.Pause
	anchors, lastSlots, latest := map[string]time.Time{}, map[string]time.Time{}, map[string]journal.Run{}
	if j != nil { // nil: no journal yet, nothing has owned this profile
		// Four statements in all, whatever the number of routines: a look at a profile must
		// stay quick as routines and history grow.
		var err error
		if pauses, err = j.Pauses(now); err != nil {
			return nil, err
		}
		if anchors, err = j.Anchors(cfg); err != nil {
			return nil, err
		}
		names := make([]string, len(cfg.Routines))
		for i, r := range cfg.Routines {
			names[i] = r.Name
		}
		if latest, err = j.LatestRuns(names); err != nil {
			return nil, fmt.Errorf("routine states: %w", err)
		}
		if lastSlots, err = j.LastSlots(); err != nil {
			return nil, fmt.Errorf("routine states: %w", err)
		}
	}
	out := make([]RoutineState, 0, len(cfg.Routines))
	for _, r := range cfg.Routines {
		if a, ok := anchors[r.Name]; ok {
			c := *r // r may be in use by a running engine
			c.Anchor = a
			r = &c
		}
		st := routineState(r, pauses, lastSlots[r.Name], now)
		if last, ok := latest[r.Name]; ok {
			st.Last = &last
			st.Running = last.Outcome == journal.OutcomeRunning
		}
		out = append(out, st)
	}
	return append(out, disabledStates(cfg)...), nil
}

// routineState is one valid routine's state without its last run: schedule, pause, next slot,
// and the overdue slot after last (its latest handled slot; zero when none).
func routineState(r *config.Routine, pauses map[string]journal.Pause, last, now time.Time) RoutineState {
	st := RoutineState{Name: r.Name, Schedule: r.Describe(), Action: r.Action, Timezone: r.Timezone, OwnZone: !r.FollowsSystemZone()}
	p, ok := pauses[r.Name]
	if !ok {
		p = pauses[""]
	}
	st.Paused, st.PausedInFile, st.PauseNote, st.PauseUntil = p.Paused || r.Paused, r.Paused, p.Note, p.Until
	if r.Paused && !p.Paused {
		st.PauseNote = "paused = true in routines.toml"
	}
	// A paused routine's slots are recorded skipped, not run: its next run is the first slot
	// once the pause ends, and none while it lasts until resumed.
	from := now
	switch {
	case r.Paused || (p.Paused && p.Until == nil):
		from = time.Time{}
	case p.Paused && p.Until.After(now):
		from = p.Until.Add(-time.Nanosecond) // a slot at the pause's end runs
	}
	if !from.IsZero() {
		if next, _ := Preview(r, from, 1); len(next) == 1 {
			st.Next = &next[0]
		}
	}
	if !st.Paused && !last.IsZero() {
		// The slot after the last one handled (run, skipped or recorded missed): if it is past,
		// nobody has handled it, however far Next has moved on.
		if due, _ := Preview(r, last, 1); len(due) == 1 && due[0].Before(now) {
			st.Overdue = &due[0]
		}
	}
	return st
}

// disabledStates lists the routines that failed validation, with their first problem.
func disabledStates(cfg *config.Config) []RoutineState {
	var out []RoutineState
	seen := map[string]bool{}
	for _, r := range cfg.Routines {
		seen[r.Name] = true
	}
	for _, p := range cfg.Problems {
		if p.Routine == "" || seen[p.Routine] {
			continue
		}
		seen[p.Routine] = true
		out = append(out, RoutineState{Name: p.Routine, Disabled: p.String()})
	}
	return out
}
