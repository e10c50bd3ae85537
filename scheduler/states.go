package scheduler

import (
	"fmt"
	"time"
)

// States returns what observers show for each routine of cfg at now, from the journal alone
// (used by `routinely status`/`routines` and the app in standby): schedule in words, next slot
// (from the persisted anchor, as the owner armed it), last run, pause and running flags, and one
// entry per disabled routine with its validation message. Errors: journal query errors, wrapped.
func States(cfg *Config, j *Journal, now time.Time) ([]RoutineState, error) {
	if cfg == nil {
		return nil, nil
	}
	if err := j.ApplyAnchors(cfg); err != nil {
		return nil, err
	}
	pauses, err := j.pauses(now)
	if err != nil {
		return nil, err
	}
	out := make([]RoutineState, 0, len(cfg.Routines))
	for _, r := range cfg.Routines {
		st, err := routineState(r, j, pauses, now)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return append(out, disabledStates(cfg)...), nil
}

// routineState is one valid routine's state from the journal.
func routineState(r *Routine, j *Journal, pauses map[string]pause, now time.Time) (RoutineState, error) {
	st := RoutineState{Name: r.Name, Schedule: r.Describe(), Action: r.Action, Timezone: r.Timezone}
	if next, _ := Preview(r, now, 1); len(next) == 1 {
		st.Next = &next[0]
	}
	runs, err := j.History(r.Name, 1)
	if err != nil {
		return st, fmt.Errorf("state of %s: %w", r.Name, err)
	}
	if len(runs) == 1 {
		st.Last = &runs[0]
		st.Running = runs[0].Outcome == OutcomeRunning
	}
	p, ok := pauses[r.Name]
	if !ok {
		p = pauses[""]
	}
	st.Paused, st.PauseNote, st.PauseUntil = p.Paused || r.Paused, p.Note, p.Until
	if r.Paused && !p.Paused {
		st.PauseNote = "paused = true in routines.toml"
	}
	return st, nil
}

// disabledStates lists the routines that failed validation, with their first problem.
func disabledStates(cfg *Config) []RoutineState {
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
