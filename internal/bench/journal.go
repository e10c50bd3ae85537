//go:build linux

package main

// Every assumption the benchmarks make about journal.db's schema (scheduler/journal_schema.go)
// lives in this file.

import (
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
	_ "modernc.org/sqlite" // the journal's own driver
)

// journalLateness returns late_by (ms) of every scheduled run with a slot in [from, to] from the
// journal at path, opened read-only; the error is the open's, the query's or a row's.
func journalLateness(path string, from, to time.Time) ([]float64, error) {
	uri, err := journal.URI(path, url.Values{"mode": {"ro"}, "_pragma": {"busy_timeout(5000)"}})
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT late_by FROM runs WHERE trigger = 'schedule' AND started IS NOT NULL AND slot BETWEEN ? AND ?`,
		from.UnixNano(), to.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer rows.Close()
	var ms []float64
	for rows.Next() {
		var ns int64
		if err := rows.Scan(&ns); err != nil {
			return nil, err
		}
		ms = append(ms, float64(ns)/1e6)
	}
	return ms, rows.Err()
}

// seedHistory adds n finished runs, spread over routines and over the n seconds before now,
// to an existing journal (the daemon that created it must have exited). Each run has a short
// summary and output, as a real run of /bin/true with a line of output would.
func seedHistory(path string, routines []string, n int) error {
	uri, err := journal.URI(path, url.Values{"_pragma": {"busy_timeout(5000)"}})
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	st, err := tx.Prepare(`INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome, started, finished, exit_code, attempts, summary, output)
			VALUES (?, ?, ?, 'schedule', 1, 'success', ?, ?, 0, 1, 'exit 0', 'done')`)
	if err != nil {
		return fmt.Errorf("seed history: %w", err)
	}
	defer st.Close()
	now := time.Now().Truncate(time.Second)
	for i := 0; i < n; i++ {
		slot := now.Add(-time.Duration(n-i) * time.Second)
		if _, err := st.Exec(routines[i%len(routines)], slot.UTC().Format(time.RFC3339Nano),
			slot.UnixNano(), slot.UnixNano(), slot.Add(5*time.Millisecond).UnixNano()); err != nil {
			return fmt.Errorf("seed history: %w", err)
		}
	}
	return tx.Commit()
}
