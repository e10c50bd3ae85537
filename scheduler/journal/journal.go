package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/routinely/routinely/internal/runclock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Journal is the SQLite run journal (WAL; readable by any process while the owner writes).
// Reads work from any process. Run records, claims and snapshots are written by the owner only
// and are fenced by its epoch (Acquire); run-now requests and pauses may come from anyone.
// The files of this package are listed in doc.go.
type Journal struct {
	db    *sql.DB
	path  string
	file  os.FileInfo   // path as checked against the file SQLite opened (openDB)
	id    string        // random, made by migration 2; names this journal's runs (runToken)
	epoch atomic.Uint64 // the writer's epoch set by Acquire; 0 = read-only use
	// readOnly: opened by OpenReadOnly; no writer goroutine, every write fails.
	readOnly bool
	// version is the schema version (PRAGMA user_version) this handle reads: the latest for a
	// writer, whatever the file has for a read-only one (runColumns).
	version int

	pruneMu sync.Mutex
	pruning map[string]bool
	pruned  map[string]time.Time // last retention pass per routine
	pruneWG sync.WaitGroup

	// writing measures the writer's current transaction (nil between transactions): one that
	// ran for seconds is waiting for a lock or a failing disk (WriteWaiting).
	writing atomic.Pointer[runclock.Span]

	// versionConn is the connection DataVersion asks, kept (with its statement) so that a
	// poll costs one step of a prepared statement; nil until the first call.
	versionMu   sync.Mutex
	versionConn *sql.Conn
	versionStmt *sql.Stmt

	writes chan writeReq // to the single writer goroutine (batch.go)
	// stmts are the writer goroutine's prepared statements by their SQL (writerStmt); only
	// that goroutine touches the map.
	stmts      map[string]*sql.Stmt
	claimQueue chan claimReq // claims, served first
	// writeBegan receives (without blocking the writer, capacity 1) when a transaction begins:
	// WriteBegan.
	writeBegan chan struct{}
	closed     chan struct{}
	writerDone chan struct{}
	closeOnce  sync.Once
}

// Open opens (creating and migrating) the journal at path for the owner and for
// processes that leave requests for it (run now, pause). The database uses WAL mode, a 5 s busy
// timeout and synchronous=FULL so a recorded claim survives a crash of the owner. Errors: one
// wrapping ErrNotJournal, saying what to do, when path holds something else (checked before
// anything is written to it); the open, pragma or migration error, wrapped (IsUnavailable
// tells those that may pass, such as another process holding the lock).
func Open(path string) (*Journal, error) {
	return OpenBusy(path, 5*time.Second)
}

// OpenBusy is Open with the time SQLite waits for another process's write lock
// before failing with SQLITE_BUSY (tests shorten it to provoke that failure quickly).
func OpenBusy(path string, busy time.Duration) (*Journal, error) {
	version, err := checkJournalFile(path, busy)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_txlock", "immediate")
	if err := createPrivate(path); err != nil { // before SQLite creates it world-readable
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	if version == 0 {
		if err := initAutoVacuum(path, busy); err != nil {
			return nil, fmt.Errorf("open journal %s: auto-vacuum: %w", path, err)
		}
	}
	db, fi, err := openDB(path, q)
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	db.SetMaxIdleConns(8) // keep connections: each new one re-runs the pragmas
	j := newJournal(db, path)
	j.file = fi
	j.version = len(migrations)
	// A journal already at this program's version needs no write lock to open (so opening works
	// while another process holds it; the first write then waits, or fails and is retried).
	if version < len(migrations) {
		if err := j.migrate(); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("open journal %s: %w", path, err)
		}
	}
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = 'journal_id'`).Scan(&j.id); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open journal %s: journal id: %w", path, err)
	}
	go j.writer()
	return j, nil
}

// initAutoVacuum gives a journal that has no page yet incremental auto-vacuum, so that
// retention gives freed pages back to the file system (Prune). SQLite takes the setting only
// before the database's first page is written, which the WAL switch right after it does, on one
// connection, with no reader to wait for; a journal created before keeps auto-vacuum off and reuses freed pages (turning it
// on then would take a VACUUM, which waits for every reader). A reader may hold the empty file
// at that instant (status, or the app's observer, checking whether a journal exists yet), so the
// write waits up to busy for it like every other. Errors: SQLite's, wrapped.
func initAutoVacuum(path string, busy time.Duration) error {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	db, _, err := openDB(path, q)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	_, err = db.Exec(`PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL`)
	return err
}

// OpenReadOnly opens an existing journal for observers (status, routines, history, the
// app in standby). It creates, migrates and writes nothing: every write through it fails with
// an error wrapping ErrReadOnly. Errors: an error wrapping os.ErrNotExist when path does not
// exist or holds no journal yet (nothing has owned this profile); one wrapping ErrNotJournal,
// saying what to do, when path holds something else; one naming the version when the schema is
// newer than this program; the open error, wrapped.
func OpenReadOnly(path string) (*Journal, error) {
	if _, err := statJournal(path); err != nil {
		return nil, fmt.Errorf("open journal read-only: %w", err)
	}
	db, fi, err := openReadOnlyDB(path, 5*time.Second) // SQLite itself refuses to create the file
	if err != nil {
		return nil, fmt.Errorf("open journal read-only: %w", err)
	}
	db.SetMaxIdleConns(4)
	version, err := journalVersion(db, path)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open journal read-only: %w", err)
	}
	if version == 0 {
		_ = db.Close()
		return nil, fmt.Errorf("open journal %s read-only: no journal yet (empty file): %w", path, os.ErrNotExist)
	}
	j := newJournal(db, path)
	j.file = fi
	j.readOnly = true
	j.version = version
	close(j.writerDone) // no writer goroutine
	return j, nil
}

func newJournal(db *sql.DB, path string) *Journal {
	return &Journal{db: db, path: path, pruning: map[string]bool{}, pruned: map[string]time.Time{},
		writes: make(chan writeReq), claimQueue: make(chan claimReq, MaxBatch), writeBegan: make(chan struct{}, 1),
		closed: make(chan struct{}), writerDone: make(chan struct{})}
}

// Close stops the claim writer, waits for background pruning and closes the database. Calls
// after the first return nil.
func (j *Journal) Close() error {
	err := error(nil)
	j.closeOnce.Do(func() {
		j.pruneWG.Wait()
		close(j.closed)
		<-j.writerDone
		j.versionMu.Lock()
		if j.versionConn != nil {
			_ = j.versionStmt.Close()
			_ = j.versionConn.Close()
			j.versionConn = nil
		}
		j.versionMu.Unlock()
		err = j.db.Close()
	})
	return err
}

// Path returns the journal's file path (its -wal and -shm files are beside it).
func (j *Journal) Path() string { return j.path }

// DataVersion returns SQLite's data_version of the journal as one kept connection sees it: it
// changes whenever any other connection, of this process or another, commits to the journal
// (https://sqlite.org/pragma.html#pragma_data_version). A poller compares it with the last
// value to skip its queries while nothing changed. Errors: the connection's or the query's,
// wrapped.
func (j *Journal) DataVersion() (int64, error) {
	j.versionMu.Lock()
	defer j.versionMu.Unlock()
	if j.versionConn == nil {
		c, err := j.db.Conn(context.Background())
		if err != nil {
			return 0, fmt.Errorf("data version: %w", err)
		}
		st, err := c.PrepareContext(context.Background(), `PRAGMA data_version`)
		if err != nil {
			_ = c.Close()
			return 0, fmt.Errorf("data version: %w", err)
		}
		j.versionConn, j.versionStmt = c, st
	}
	var v int64
	if err := j.versionStmt.QueryRow().Scan(&v); err != nil {
		return 0, fmt.Errorf("data version: %w", err)
	}
	return v, nil
}

// MaxEpoch returns the highest owner epoch recorded (0 for a new journal). Errors: the query
// error, wrapped.
func (j *Journal) MaxEpoch() (uint64, error) {
	e, err := maxEpoch(j.db)
	if err != nil {
		return 0, fmt.Errorf("journal max epoch: %w", err)
	}
	return e, nil
}

// Acquire records epoch as the journal's writer epoch (epochs never go back: docs/design.md#44-fencing). From
// then on every write of an earlier epoch is fenced. Runs that earlier epochs left `running`
// (orphans: their owner ended mid-run) stay `running` until the new owner has dealt with their
// processes and records them (endOrphans, CloseOrphan); Acquire returns how many there are.
// Errors: ErrFenced when a newer epoch is recorded; the query error, wrapped.
func (j *Journal) Acquire(epoch uint64, now time.Time) (orphans int, err error) {
	err = j.write(func(tx *sql.Tx) error {
		maxE, err := maxEpoch(tx)
		if err != nil {
			return err
		}
		if err := fencedBy(maxE, epoch); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT OR IGNORE INTO epochs(epoch, acquired_at) VALUES(?, ?)`, epoch, now.UnixNano()); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT COUNT(*) FROM runs WHERE outcome = ? AND epoch < ?`, OutcomeRunning, epoch).Scan(&orphans)
	})
	if err != nil {
		return 0, fmt.Errorf("journal acquire: %w", err)
	}
	j.epoch.Store(epoch)
	return orphans, nil
}

// fenced is the SQL condition that makes a write conditional on no newer epoch.
const fenced = `NOT EXISTS (SELECT 1 FROM epochs WHERE epoch > ?)`

func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

func nsTime(ns sql.NullInt64) *time.Time {
	if !ns.Valid {
		return nil
	}
	t := time.Unix(0, ns.Int64)
	return &t
}
