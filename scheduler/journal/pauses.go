package journal

// Pauses (docs/design.md#48-pauses): any process sets or clears one; the owner records paused slots skipped.

import (
	"database/sql"
	"fmt"
	"time"
)

// SetPaused pauses routine ("" = all) with an optional note and end time (nil: until resumed).
// The pause lives in the journal, so it survives restarts and handoffs; while paused, slots are
// recorded `skipped` with reason `paused`. Errors: one wrapping ErrReplaced when this handle does not own
// and journal.db is no longer the file it opened (requestIntact); the write error, wrapped.
func (j *Journal) SetPaused(routine, note string, until *time.Time) error {
	if err := j.requestIntact(); err != nil {
		return fmt.Errorf("pause %q: %w", routine, err)
	}
	var u any
	if until != nil {
		u = until.UnixNano()
	}
	err := j.exec(`INSERT INTO pauses (routine, note, until, since) VALUES (?, ?, ?, ?)
		ON CONFLICT(routine) DO UPDATE SET note = excluded.note, until = excluded.until, since = excluded.since`,
		routine, note, u, time.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("pause %q: %w", routine, err)
	}
	return nil
}

// Resume clears a pause on routine ("" = all: every pause, global and per routine). Resuming
// does not replay the paused span: those slots are already recorded skipped. Errors: one wrapping
// ErrReplaced when this handle does not own and journal.db is no longer the file it opened
// (requestIntact); the write error, wrapped.
func (j *Journal) Resume(routine string) error {
	if err := j.requestIntact(); err != nil {
		return fmt.Errorf("resume %q: %w", routine, err)
	}
	var err error
	if routine == "" {
		err = j.exec(`DELETE FROM pauses`)
	} else {
		err = j.exec(`DELETE FROM pauses WHERE routine = ?`, routine)
	}
	if err != nil {
		return fmt.Errorf("resume %q: %w", routine, err)
	}
	return nil
}

// Pause is the effective pause of one routine.
type Pause struct {
	Paused bool
	Note   string
	Until  *time.Time
}

// Pauses returns every unexpired pause at now, keyed by routine ("" = all).
// Errors: the query error, wrapped.
func (j *Journal) Pauses(now time.Time) (map[string]Pause, error) {
	return j.pausesWhere(`SELECT routine, note, until FROM pauses WHERE until IS NULL OR until > ?`, now.UnixNano())
}

// pausesWhere runs query (routine, note, until) and returns its rows by routine.
func (j *Journal) pausesWhere(query string, args ...any) (map[string]Pause, error) {
	rows, err := j.db.Query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("pauses: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]Pause{}
	for rows.Next() {
		var name, note string
		var until sql.NullInt64
		if err := rows.Scan(&name, &note, &until); err != nil {
			return nil, fmt.Errorf("pauses: %w", err)
		}
		out[name] = Pause{Paused: true, Note: note, Until: nsTime(until)}
	}
	return out, rows.Err()
}

// AllPauses returns every pause row by routine ("" for the global pause), those whose until has
// passed included: a caller that keeps the result filters by its own now (scheduler's
// StatesCache). Errors: the query error, wrapped.
func (j *Journal) AllPauses() (map[string]Pause, error) {
	return j.pausesWhere(`SELECT routine, note, until FROM pauses`)
}

// PauseOf returns routine's effective pause at now: its own, else the global one.
// Errors: the query error, wrapped.
func (j *Journal) PauseOf(routine string, now time.Time) (Pause, error) {
	all, err := j.Pauses(now)
	if err != nil {
		return Pause{}, err
	}
	if p, ok := all[routine]; ok {
		return p, nil
	}
	return all[""], nil
}
