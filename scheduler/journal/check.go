package journal

// Telling a Routinely journal from anything else at the journal's path, and telling a journal
// that refuses writes for a while (locked, disk full) from one that never will.

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// journalTables are the tables of the first migration: a database whose user_version says it
// is a journal has every one of them (later migrations only add).
var journalTables = []string{"epochs", "runs", "requests", "pauses", "arming", "snapshots"}

// checkJournalFile looks at path before Open lets SQLite write to it (setting WAL mode
// rewrites a database's header, and the first migration would create tables in any database).
// It returns the schema version of the journal at path (0 when path is missing, empty or an
// empty database), and otherwise an error wrapping ErrNotJournal (not a regular file, not
// SQLite, another program's database, damaged) or naming a schema newer than this program. The
// check opens the file read-only, waiting up to busy for a lock, and changes nothing. Errors of
// reading it (a lock held longer, permission) are returned wrapped.
func checkJournalFile(path string, busy time.Duration) (int, error) {
	fi, err := statJournal(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil // Open creates it
	case err != nil:
		return 0, err
	case fi.Size() == 0:
		return 0, nil
	}
	db, _, err := openReadOnlyDB(path, busy)
	if err != nil {
		return 0, err
	}
	defer func() { _ = db.Close() }()
	return journalVersion(db, path)
}

// statJournal returns what is at path without following a symbolic link. Errors: one wrapping
// fs.ErrNotExist when there is nothing; one wrapping ErrNotJournal when it is not a regular
// file — a FIFO would block SQLite's first read forever, a directory or device is no journal,
// and a symbolic link is never followed for a file Routinely writes (it could point at any file
// of this user's); the Lstat error otherwise. SQLite then opens the path itself: nobody else can
// swap the file in between, since the state directory is private to this user (ownership's
// checkDirSafe refuses any other).
func statJournal(path string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil, fmt.Errorf("journal %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, notJournal(path, "it is a symbolic link, and Routinely never follows one in its state directory (move the file it points to here instead)")
	case !fi.Mode().IsRegular():
		return nil, notJournal(path, fmt.Sprintf("it is not a regular file (%s)", fi.Mode().Type()))
	}
	return fi, nil
}

// openReadOnlyDB opens path for reading only: SQLite refuses to create or write it, and no
// pragma that writes is set. busy is how long a read waits for another process's lock. It
// returns path's FileInfo as checked against the file SQLite opened (openDB). Errors: openDB's.
func openReadOnlyDB(path string, busy time.Duration) (*sql.DB, os.FileInfo, error) {
	q := url.Values{}
	q.Add("mode", "ro")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "query_only(1)")
	return openDB(path, q)
}

// MaxEpochOf returns the highest owner epoch recorded in the journal at path, reading it
// without writing and waiting at most 250 ms for a lock (an owner-to-be calls it holding the
// ownership guard): 0 when there is no journal yet. Errors: ErrNotJournal (wrapped) as for
// Open; a read error, wrapped (IsUnavailable tells one that may pass).
func MaxEpochOf(path string) (uint64, error) {
	fi, err := statJournal(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, err
	case fi.Size() == 0:
		return 0, nil
	}
	// One connection for the check and the query: a standby calls this between taking the guard
	// and owning, and each open of a journal whose owner was killed rebuilds the WAL index.
	db, _, err := openReadOnlyDB(path, 250*time.Millisecond)
	if err != nil {
		return 0, err
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	version, err := journalVersion(db, path)
	if err != nil || version == 0 {
		return 0, err
	}
	e, err := maxEpoch(db)
	if err != nil {
		return 0, fmt.Errorf("journal %s: max epoch: %w", path, err)
	}
	return e, nil
}

// journalVersion returns the schema version of the journal open as db: 0 for an empty database
// (no journal yet). It reads the version and the table names in one read transaction, so both
// come from one snapshot: another process (or the app's observer) may be creating the journal at
// that moment, and a version read before its migration committed with a table list read after
// would look like another program's database (seen in the desktop test: the app then refused
// its own new journal). A migration sets the version in the transaction that creates the
// tables (migrateOne), so within one snapshot version 0 with tables is really someone else's.
// Errors: ErrNotJournal (wrapped, with what to do) when db is not a Routinely journal; one
// naming both versions when the schema is newer than this program; a read error (wrapped)
// otherwise.
func journalVersion(db *sql.DB, path string) (int, error) {
	tx, err := db.Begin()
	if err != nil {
		return 0, classifyOpenError(path, err)
	}
	defer func() { _ = tx.Rollback() }() // it only read
	var version int
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return 0, classifyOpenError(path, err)
	}
	rows, err := tx.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return 0, classifyOpenError(path, err)
	}
	defer func() { _ = rows.Close() }()
	have := map[string]bool{}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return 0, classifyOpenError(path, err)
		}
		have[n] = true
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return 0, classifyOpenError(path, err)
	}
	switch {
	case version == 0 && len(names) == 0:
		return 0, nil
	case version == 0:
		if len(names) > 5 {
			names = append(names[:5], "…")
		}
		return 0, notJournal(path, "it is an SQLite database of another program (tables "+strings.Join(names, ", ")+")")
	case version > len(migrations):
		return 0, fmt.Errorf("journal %s: schema version %d is newer than this program (%d): run the newer Routinely, or move the journal aside to start an empty history", path, version, len(migrations))
	}
	for _, t := range journalTables {
		if !have[t] {
			return 0, notJournal(path, fmt.Sprintf("its schema version is %d but it has no %q table", version, t))
		}
	}
	return version, nil
}

// classifyOpenError maps SQLite's verdict on a file that is not a usable database (SQLITE_NOTADB,
// SQLITE_CORRUPT) to ErrNotJournal; any other error is returned wrapped as it is.
func classifyOpenError(path string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return notJournal(path, "it is not an SQLite database")
		case sqlite3.SQLITE_CORRUPT:
			return notJournal(path, "it is damaged ("+se.Error()+")")
		}
	}
	return fmt.Errorf("journal %s: %w", path, err)
}

// notJournal is the refusal of a journal file that cannot be used, with what to do. The file is
// never modified or deleted: it may be the only copy of someone's data.
func notJournal(path, why string) error {
	base := filepath.Base(path)
	return fmt.Errorf("%s: %w: %s. Nothing was changed. To start with an empty history, move it aside "+
		"together with any %s-wal and %s-shm beside it (for example, rename each to end in .bad); "+
		"Routinely then creates a new journal there", path, ErrNotJournal, why, base, base)
}

// IsUnavailable reports whether err is the journal refusing a read or write for a reason
// that may pass without anyone fixing Routinely's files: another process holds its lock
// (SQLITE_BUSY, SQLITE_LOCKED), the disk is full (SQLITE_FULL), an I/O error, a read-only or
// unreachable file (SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_IOERR), or a lock protocol race
// (SQLITE_PROTOCOL). A journal that is not one (ErrNotJournal), a newer schema or a fenced
// write is not "unavailable": waiting does not help.
func IsUnavailable(err error) bool {
	var se *sqlite.Error
	if err == nil || errors.Is(err, ErrNotJournal) || !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR,
		sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}
