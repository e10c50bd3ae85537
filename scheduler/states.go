package scheduler

import (
	"fmt"
	"sync"
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
	var look journalLook
	if j != nil { // nil: no journal yet, nothing has owned this profile
		var err error
		if look, err = readLook(cfg, j); err != nil {
			return nil, err
		}
	}
	return statesAt(cfg, look, now), nil
}

// journalLook is what States reads from the journal for one config: pause rows (expired ones
// included, so that it stays true as time passes), anchors, each routine's last handled slot
// and latest run.
type journalLook struct {
	pauses             map[string]journal.Pause
	anchors, lastSlots map[string]time.Time
	latest             map[string]journal.Run
}

// readLook reads cfg's journalLook from j. Four statements in all, whatever the number of
// routines: a look at a profile must stay quick as routines and history grow. Errors: the
// queries', wrapped.
func readLook(cfg *config.Config, j *journal.Journal) (journalLook, error) {
	var l journalLook
	var err error
	if l.pauses, err = j.AllPauses(); err != nil {
		return l, err
	}
	if l.anchors, err = j.Anchors(cfg); err != nil {
		return l, err
	}
	names := make([]string, len(cfg.Routines))
	for i, r := range cfg.Routines {
		names[i] = r.Name
	}
	if l.latest, err = j.LatestRuns(names); err != nil {
		return l, fmt.Errorf("routine states: %w", err)
	}
	if l.lastSlots, err = j.LastSlots(); err != nil {
		return l, fmt.Errorf("routine states: %w", err)
	}
	return l, nil
}

// statesAt computes the states of cfg's routines at now from what the journal said (l).
func statesAt(cfg *config.Config, l journalLook, now time.Time) []RoutineState {
	pauses := map[string]journal.Pause{}
	for name, p := range l.pauses {
		if p.Until == nil || p.Until.After(now) { // a pause that has ended is no pause
			pauses[name] = p
		}
	}
	out := make([]RoutineState, 0, len(cfg.Routines))
	for _, r := range cfg.Routines {
		if a, ok := l.anchors[r.Name]; ok {
			c := *r // r may be in use by a running engine
			c.Anchor = a
			r = &c
		}
		st := routineState(r, pauses, l.lastSlots[r.Name], now)
		if last, ok := l.latest[r.Name]; ok {
			st.Last = &last
			st.Running = last.Outcome == journal.OutcomeRunning
		}
		out = append(out, st)
	}
	return append(out, disabledStates(cfg)...)
}

// StatesCache is States for a caller that looks again and again (the desktop app, every
// second): it reads the journal again only when the journal's data_version moved (anything was
// committed, by any process) or the config is another one, and otherwise computes the states at
// the new now from what it read last. The zero value is ready; it is safe for concurrent use.
type StatesCache struct {
	mu      sync.Mutex
	ok      bool
	j       *journal.Journal
	cfg     *config.Config
	version int64
	look    journalLook
}

// States is States(cfg, j, now), reading the journal only when it changed since the last call
// with the same j and cfg. A data_version that cannot be read counts as a change. Errors: as
// States.
func (c *StatesCache) States(cfg *config.Config, j *journal.Journal, now time.Time) ([]RoutineState, error) {
	if cfg == nil || j == nil {
		return States(cfg, j, now)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, verr := j.DataVersion()
	if !c.ok || verr != nil || v != c.version || c.j != j || c.cfg != cfg {
		look, err := readLook(cfg, j)
		if err != nil {
			c.ok = false
			return nil, err
		}
		c.ok, c.j, c.cfg, c.version, c.look = verr == nil, j, cfg, v, look
	}
	return statesAt(cfg, c.look, now), nil
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
