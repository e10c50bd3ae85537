//go:build linux

package torture

// Every assumption about journal.db's schema (scheduler/journal_schema.go) lives in this file.

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
	_ "modernc.org/sqlite" // the journal's own driver (pure Go)
)

// JournalRun is one row of the runs table as the checks see it.
type JournalRun struct {
	Routine string
	Slot    time.Time
	Epoch   uint64
	Outcome string
	Trigger string
	Started time.Time // zero when the run never started (skipped, missed)
}

// ReadJournal opens path read-only and returns every scheduled run (manual runs have no slot).
func ReadJournal(path string) ([]JournalRun, error) {
	uri, err := journal.URI(path, url.Values{"mode": {"ro"}, "_pragma": {"busy_timeout(5000)"}})
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var runs []JournalRun
	rows, err := db.Query(`SELECT routine, slot, epoch, outcome, trigger, started FROM runs WHERE trigger != 'manual'`)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r JournalRun
		var slot int64
		var started sql.NullInt64
		if err := rows.Scan(&r.Routine, &slot, &r.Epoch, &r.Outcome, &r.Trigger, &started); err != nil {
			return nil, err
		}
		r.Slot = time.Unix(0, slot)
		if started.Valid {
			r.Started = time.Unix(0, started.Int64)
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// LockJournal holds SQLite's write lock on the journal at path (BEGIN EXCLUSIVE) for d, as
// another program writing to it would: the owner's claims must fail without a run starting,
// and the slots of that span must be recorded missed once the lock is gone. It returns once
// the lock is released, or at once with the reason when it could not be taken.
func LockJournal(path string, d time.Duration) error {
	uri, err := journal.URI(path, url.Values{"mode": {"rw"}, "_pragma": {"busy_timeout(2000)"}})
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		return fmt.Errorf("begin exclusive: %w", err)
	}
	time.Sleep(d)
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	return err
}
