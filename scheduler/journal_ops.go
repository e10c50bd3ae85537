package scheduler

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// RequestRun records a run-now request for routine and returns its id. The owner's engine picks
// requests up within 1 s and runs them through the same claim, overlap, timeout and history path
// as scheduled runs, with trigger "manual" (issue 5: a manual run is never a second firing from
// a non-owner). Errors: the insert error, wrapped.
func (j *Journal) RequestRun(routine string) (int64, error) {
	var id int64
	err := j.write(func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO requests (routine, requested_at) VALUES (?, ?)`, routine, time.Now().UnixNano())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("request run of %s: %w", routine, err)
	}
	return id, nil
}

// RequestResult reports the run a run-now request became: runID 0 while still pending.
// Errors: ErrUnknownRoutine when the owner had no such routine; ErrNoRun when requestID is
// unknown.
func (j *Journal) RequestResult(requestID int64) (runID int64, err error) {
	var run sql.NullInt64
	var reqErr sql.NullString
	err = j.db.QueryRow(`SELECT run_id, error FROM requests WHERE id = ?`, requestID).Scan(&run, &reqErr)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("request %d: %w", requestID, ErrNoRun)
	}
	if err != nil {
		return 0, fmt.Errorf("request %d: %w", requestID, err)
	}
	if reqErr.Valid {
		return 0, fmt.Errorf("request %d: %s: %w", requestID, reqErr.String, ErrUnknownRoutine)
	}
	if run.Int64 < 0 { // taken by the owner, not yet claimed
		return 0, nil
	}
	return run.Int64, nil
}

// request is a pending run-now request.
type request struct {
	ID      int64
	Routine string
	At      time.Time
}

// pendingRequests returns the requests no run has answered yet, oldest first: new ones and
// ones an owner took (run_id -1) but never claimed, e.g. because it died or yielded first.
func (j *Journal) pendingRequests() ([]request, error) {
	rows, err := j.db.Query(`SELECT id, routine, requested_at FROM requests
		WHERE (run_id IS NULL OR run_id = -1) AND error IS NULL ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("pending requests: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []request
	for rows.Next() {
		var r request
		var at int64
		if err := rows.Scan(&r.ID, &r.Routine, &at); err != nil {
			return nil, fmt.Errorf("pending requests: %w", err)
		}
		r.At = time.Unix(0, at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// answerRequest links a request to its run, or records why it cannot run (msg non-empty).
func (j *Journal) answerRequest(id, runID int64, msg string) error {
	var run, e any
	if runID != 0 {
		run = runID
	}
	if msg != "" {
		e = msg
	}
	if err := j.exec(`UPDATE requests SET run_id = ?, error = ? WHERE id = ?`, run, e, id); err != nil {
		return fmt.Errorf("answer request %d: %w", id, err)
	}
	return nil
}

// SetPaused pauses routine ("" = all) with an optional note and end time (nil: until resumed).
// The pause lives in the journal, so it survives restarts and handoffs; while paused, slots are
// recorded `skipped` with reason `paused`. Errors: the write error, wrapped.
func (j *Journal) SetPaused(routine, note string, until *time.Time) error {
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
// does not replay the paused span: those slots are already recorded skipped. Errors: the write
// error, wrapped.
func (j *Journal) Resume(routine string) error {
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

// pause is the effective pause of one routine.
type pause struct {
	Paused bool
	Note   string
	Until  *time.Time
}

// pauses returns every unexpired pause at now, keyed by routine ("" = all).
func (j *Journal) pauses(now time.Time) (map[string]pause, error) {
	rows, err := j.db.Query(`SELECT routine, note, until FROM pauses WHERE until IS NULL OR until > ?`, now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("pauses: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]pause{}
	for rows.Next() {
		var name, note string
		var until sql.NullInt64
		if err := rows.Scan(&name, &note, &until); err != nil {
			return nil, fmt.Errorf("pauses: %w", err)
		}
		out[name] = pause{Paused: true, Note: note, Until: nsTime(until)}
	}
	return out, rows.Err()
}

// pauseOf returns routine's effective pause at now: its own, else the global one.
func (j *Journal) pauseOf(routine string, now time.Time) (pause, error) {
	all, err := j.pauses(now)
	if err != nil {
		return pause{}, err
	}
	if p, ok := all[routine]; ok {
		return p, nil
	}
	return all[""], nil
}

// armed records is what arm returns for one routine.
type armInfo struct{ firstArmed, anchor time.Time }

// arm records that the routines are armed (one transaction, so 10,000 routines arm quickly) and
// returns, per name, when each was first armed and, for every schedules (every[name] > 0), the
// grid anchor: kept while the interval stays the same, reset to now otherwise.
func (j *Journal) arm(every map[string]time.Duration, now time.Time) (map[string]armInfo, error) {
	now = now.Truncate(time.Second)
	out := make(map[string]armInfo, len(every))
	err := j.write(func(tx *sql.Tx) error {
		up, err := tx.Prepare(`INSERT INTO arming (routine, first_armed, every, anchor) VALUES (?, ?, ?, ?)
			ON CONFLICT(routine) DO UPDATE SET every = excluded.every,
				anchor = CASE WHEN arming.every = excluded.every AND arming.anchor != 0 THEN arming.anchor ELSE excluded.anchor END
			RETURNING first_armed, anchor`)
		if err != nil {
			return err
		}
		defer func() { _ = up.Close() }()
		for name, d := range every {
			var first, anc int64
			if err := up.QueryRow(name, now.UnixNano(), int64(d), now.UnixNano()).Scan(&first, &anc); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			out[name] = armInfo{time.Unix(0, first), time.Unix(0, anc)}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("arm: %w", err)
	}
	return out, nil
}

// ApplyAnchors sets the persisted `every` grid anchors on cfg's routines, so Preview shows the
// slots the owner has armed. It modifies cfg: use it on a Config of your own. Errors: the query
// error, wrapped.
func (j *Journal) ApplyAnchors(cfg *Config) error {
	anchors, err := j.anchors(cfg)
	if err != nil {
		return err
	}
	for _, r := range cfg.Routines {
		if a, ok := anchors[r.Name]; ok {
			r.Anchor = a
		}
	}
	return nil
}

// anchors returns the persisted grid anchor of each `every` routine of cfg whose interval is
// still the one armed. Errors: the query error, wrapped.
func (j *Journal) anchors(cfg *Config) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, r := range cfg.Routines {
		if r.Kind != KindEvery {
			continue
		}
		var every, anc int64
		err := j.db.QueryRow(`SELECT every, anchor FROM arming WHERE routine = ?`, r.Name).Scan(&every, &anc)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("anchors: %w", err)
		}
		if time.Duration(every) == r.Every && anc != 0 {
			out[r.Name] = time.Unix(0, anc)
		}
	}
	return out, nil
}
