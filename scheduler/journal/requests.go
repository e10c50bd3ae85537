package journal

// Run-now requests (docs/design.md#47-run-now-requests): any process records one; the owner serves it.

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/routinely/routinely/scheduler/config"
)

// RequestRun records a run-now request for routine and returns its id. The owner's engine picks
// requests up within 1 s and runs them through the same claim, overlap, timeout and history path
// as scheduled runs, with trigger "manual" (a manual run is never a second firing from
// a non-owner). Errors: one wrapping ErrReplaced when this handle does not own and journal.db is no
// longer the file it opened (requestIntact); the insert error, wrapped.
func (j *Journal) RequestRun(routine string) (int64, error) {
	if err := j.requestIntact(); err != nil {
		return 0, fmt.Errorf("request run of %s: %w", routine, err)
	}
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
		return 0, fmt.Errorf("request %d: %s: %w", requestID, reqErr.String, config.ErrUnknownRoutine)
	}
	if run.Int64 < 0 { // taken by the owner, not yet claimed
		return 0, nil
	}
	return run.Int64, nil
}

// Request is a pending run-now request.
type Request struct {
	ID      int64
	Routine string
	At      time.Time
}

// PendingRequests returns the requests no run has answered yet, oldest first: new ones and
// ones an owner took (run_id -1) but never claimed, e.g. because it died or yielded first.
// Errors: the query error, wrapped.
func (j *Journal) PendingRequests() ([]Request, error) {
	rows, err := j.db.Query(`SELECT id, routine, requested_at FROM requests
		WHERE (run_id IS NULL OR run_id = -1) AND error IS NULL ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("pending requests: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Request
	for rows.Next() {
		var r Request
		var at int64
		if err := rows.Scan(&r.ID, &r.Routine, &at); err != nil {
			return nil, fmt.Errorf("pending requests: %w", err)
		}
		r.At = time.Unix(0, at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// AnswerRequest links a request to its run, or records why it cannot run (msg non-empty).
// Errors: the write error (ErrReadOnly, ErrClosed, SQLite's), wrapped.
func (j *Journal) AnswerRequest(id, runID int64, msg string) error {
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
