package journal

// The last good routines.toml: what the owner runs while the file does not parse. The owner
// records it here each time it applies a file that parses, so that it has one owner and one
// place: observers (status, routines, the desktop app in standby) show that set with the file's
// error, and the next owner runs it too.

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/routinely/routinely/scheduler/config"
)

// lastGoodKey is the meta row holding the last good config, as JSON (lastGoodRow).
const lastGoodKey = "last_good_config"

// LastGood is the routines file the owner last applied successfully.
type LastGood struct {
	Config    config.Snapshot
	AppliedAt time.Time // when an owner first applied these contents
	Epoch     uint64    // the owner that recorded it
}

type lastGoodRow struct {
	Config    config.Snapshot `json:"config"`
	AppliedAt int64           `json:"applied_at"` // unix ns
	Epoch     uint64          `json:"epoch"`
}

// SaveLastGood records snap as the last good routines file, applied at now, unless it is
// already the one recorded (then nothing is written and the recorded time stays). Only an
// owner records it: a handle with no epoch, or one a newer owner has fenced, gets ErrFenced.
// Errors: ErrFenced, ErrReadOnly, the write's error, all wrapped.
func (j *Journal) SaveLastGood(snap config.Snapshot, now time.Time) error {
	epoch := j.epoch.Load()
	if epoch == 0 {
		return fmt.Errorf("save the last good routines file: no owner epoch: %w", ErrFenced)
	}
	err := j.write(func(tx *sql.Tx) error {
		maxE, err := maxEpoch(tx)
		if err != nil {
			return err
		}
		if err := fencedBy(maxE, epoch); err != nil {
			return err
		}
		if cur, err := readLastGood(tx); err == nil && cur != nil && sameSnapshot(cur.Config, snap) {
			return nil
		}
		b, err := json.Marshal(lastGoodRow{Config: snap, AppliedAt: now.UnixNano(), Epoch: epoch})
		if err != nil {
			return err
		}
		_, err = tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, lastGoodKey, string(b))
		return err
	})
	if err != nil {
		return fmt.Errorf("save the last good routines file: %w", err)
	}
	return nil
}

// LastGood returns the last good routines file an owner recorded, nil when none has (or the
// journal predates the record). Errors: the query's, or a record that does not decode, wrapped.
func (j *Journal) LastGood() (*LastGood, error) {
	lg, err := readLastGood(j.db)
	if err != nil {
		return nil, fmt.Errorf("read the last good routines file: %w", err)
	}
	return lg, nil
}

func readLastGood(q querier) (*LastGood, error) {
	var v string
	err := q.QueryRow(`SELECT value FROM meta WHERE key = ?`, lastGoodKey).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil && strings.Contains(err.Error(), "no such table"):
		return nil, nil // a journal from before the meta table: nothing recorded
	case err != nil:
		return nil, err
	}
	var row lastGoodRow
	if err := json.Unmarshal([]byte(v), &row); err != nil {
		return nil, err
	}
	return &LastGood{Config: row.Config, AppliedAt: time.Unix(0, row.AppliedAt), Epoch: row.Epoch}, nil
}

func sameSnapshot(a, b config.Snapshot) bool {
	return a.Path == b.Path && string(a.Data) == string(b.Data) && a.DistrustWhy == b.DistrustWhy && a.DistrustFix == b.DistrustFix
}
