package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// LastSnapshot returns routine's newest page-watch snapshot (action.SnapshotStore); ok is false
// when there is none. Errors: the query error, wrapped.
func (j *Journal) LastSnapshot(routine string) (text string, ok bool, err error) {
	err = j.db.QueryRow(`SELECT text FROM snapshots WHERE routine = ? ORDER BY id DESC LIMIT 1`, routine).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("last snapshot of %s: %w", routine, err)
	}
	return text, true, nil
}

// SaveSnapshot stores text as routine's newest snapshot and keeps the newest keep (at least 1).
// Errors: ErrFenced when a newer owner epoch is recorded; the write error, wrapped.
func (j *Journal) SaveSnapshot(routine string, text string, keep int) error {
	if keep < 1 {
		keep = 1
	}
	err := j.write(func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO snapshots (routine, taken, text) SELECT ?, ?, ? WHERE `+fenced,
			routine, time.Now().UnixNano(), text, j.epoch.Load())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrFenced
		}
		_, err = tx.Exec(`DELETE FROM snapshots WHERE routine = ? AND id NOT IN
			(SELECT id FROM snapshots WHERE routine = ? ORDER BY id DESC LIMIT ?)`, routine, routine, keep)
		return err
	})
	if err != nil {
		return fmt.Errorf("save snapshot of %s: %w", routine, err)
	}
	return nil
}
