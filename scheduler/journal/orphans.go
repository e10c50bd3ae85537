package journal

import (
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/routinely/routinely/ownership"
)

// Orphan is a run an earlier owner left `running`: that owner ended (SIGKILL, crash, power
// loss) in the middle of it, so nobody waits for its processes and nobody will record its end.
type Orphan struct {
	ID      int64
	Routine string
	Epoch   uint64
	Token   string                    // the run's ROUTINELY_RUN_TOKEN (runToken)
	Leader  ownership.ProcessIdentity // the last process the run started; PID 0: none recorded
}

// RunToken is the value of ROUTINELY_RUN_TOKEN for run id: this journal's random id and the run
// id. Run ids are unique only within a journal, so the journal id keeps two profiles' runs (or
// two test homes) apart. Every process a run starts inherits it, so the next owner can find
// them even when the owner died before recording the leader (endOrphans).
func (j *Journal) RunToken(id int64) string {
	return j.id + "-" + strconv.FormatInt(id, 10)
}

// RecordLeader stores p as the process run id started (each attempt of a retried run replaces
// the previous one). A run already finished is left alone. Errors: ErrFenced when a newer epoch
// is recorded; the write's error, wrapped.
func (j *Journal) RecordLeader(id int64, p ownership.ProcessIdentity) error {
	err := j.write1(func(tx *sql.Tx) error {
		// No row updated and not fenced: the run has already been recorded.
		return j.fencedUpdate(tx, `UPDATE runs SET leader_pid = ?, leader_start_ms = ?, leader_start_ticks = ?
			WHERE id = ? AND outcome = ? AND `+fenced,
			p.PID, p.StartMS, int64(p.StartTicks), id, OutcomeRunning, j.epoch.Load())
	})
	if err != nil {
		return fmt.Errorf("record the process of run %d: %w", id, err)
	}
	return nil
}

// Orphans returns the runs that epochs before the writer's left `running`, oldest first.
// Errors: the query error, wrapped.
func (j *Journal) Orphans() ([]Orphan, error) {
	rows, err := j.db.Query(`SELECT id, routine, epoch, leader_pid, leader_start_ms, leader_start_ticks
		FROM runs WHERE outcome = ? AND epoch < ? ORDER BY id`, OutcomeRunning, j.epoch.Load())
	if err != nil {
		return nil, fmt.Errorf("orphaned runs: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Orphan
	for rows.Next() {
		var o Orphan
		var pid, startMS, ticks sql.NullInt64
		if err := rows.Scan(&o.ID, &o.Routine, &o.Epoch, &pid, &startMS, &ticks); err != nil {
			return nil, fmt.Errorf("orphaned runs: %w", err)
		}
		o.Token = j.RunToken(o.ID)
		if pid.Valid {
			o.Leader = ownership.ProcessIdentity{PID: int(pid.Int64), StartMS: startMS.Int64, StartTicks: uint64(ticks.Int64)}
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// CloseOrphan records orphan run id `interrupted` with reason, finished at now. Errors: ErrFenced
// when a newer epoch is recorded (that owner deals with the run); the write's error, wrapped. A
// run that is no longer running is left as it is.
func (j *Journal) CloseOrphan(id int64, reason string, now time.Time) error {
	err := j.write1(func(tx *sql.Tx) error {
		return j.fencedUpdate(tx, `UPDATE runs SET outcome = ?, reason = ?, finished = ?
			WHERE id = ? AND outcome = ? AND epoch < ? AND `+fenced,
			OutcomeInterrupted, reason, now.UnixNano(), id, OutcomeRunning, j.epoch.Load(), j.epoch.Load())
	})
	if err != nil {
		return fmt.Errorf("record orphaned run %d: %w", id, err)
	}
	return nil
}

// fencedUpdate runs query (an UPDATE guarded by the fenced condition) in tx. When it changes no
// row it tells why: ErrFenced (wrapped by fencedBy) when a newer epoch is recorded, else nil
// (the row is not in the state the update expects, which the callers treat as done already).
// Errors: the statement's or the epoch query's.
func (j *Journal) fencedUpdate(tx *sql.Tx, query string, args ...any) error {
	res, err := tx.Exec(query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	maxE, err := maxEpoch(tx)
	if err != nil {
		return err
	}
	return fencedBy(maxE, j.epoch.Load())
}
