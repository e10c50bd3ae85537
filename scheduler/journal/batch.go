package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/routinely/routinely/internal/runclock"
)

// MaxBatch bounds one group-commit transaction: the claims and other writes committed with one
// fsync (and the work a claim at the end of the queue waits behind).
const MaxBatch = 512

// writeReq is one write waiting for the journal's writer goroutine.
type writeReq struct {
	fn   func(tx *sql.Tx) error
	one  bool // fn modifies with a single statement: SQLite undoes it alone on failure
	resp chan error
}

// write runs fn in a transaction of the journal's single writer goroutine and returns fn's
// error (or the commit's). Writes queued while the previous transaction commits are committed
// together (group commit), and one writer per process means this process's writers never meet
// SQLite's sleeping busy handler. Each fn runs inside a savepoint, so a failing fn leaves no
// partial effect and does not fail the others.
func (j *Journal) write(fn func(tx *sql.Tx) error) error {
	return j.enqueue(writeReq{fn: fn, resp: make(chan error, 1)})
}

// write1 is write for a fn whose only modification is one statement (a failing statement
// leaves nothing behind in SQLite), so it needs no savepoint.
func (j *Journal) write1(fn func(tx *sql.Tx) error) error {
	return j.enqueue(writeReq{fn: fn, one: true, resp: make(chan error, 1)})
}

func (j *Journal) enqueue(req writeReq) error {
	if j.readOnly {
		return ErrReadOnly
	}
	select {
	case j.writes <- req:
	case <-j.closed:
		return ErrClosed
	}
	return <-req.resp
}

// WaitWritable commits an empty transaction through the writer, waiting for another process's
// write lock like any write (up to the busy timeout). It returns nil once the journal takes
// writes; otherwise the error a write would get now (SQLITE_BUSY, a full disk, ErrReadOnly,
// ErrClosed), wrapped.
func (j *Journal) WaitWritable() error {
	return j.write1(func(*sql.Tx) error { return nil })
}

// exec runs one statement through the writer.
func (j *Journal) exec(query string, args ...any) error {
	return j.write1(func(tx *sql.Tx) error {
		_, err := tx.Exec(query, args...)
		return err
	})
}

// inWriter is the writer goroutine's querier for tx (nil: autocommit), with its prepared
// statements (writerQ). Only the writer goroutine calls it: the statements' cache has no lock.
func (j *Journal) inWriter(tx *sql.Tx) writerQ { return writerQ{j: j, tx: tx} }

// writerStmt returns query prepared once for the writer goroutine's life (closed when it
// returns). SQLite parses a statement at each prepare, and database/sql prepares every Exec
// anew: on an idle owner that was the largest part of each claim's and finish's CPU (perf).
// Only the writer goroutine calls it. Errors: the prepare's.
func (j *Journal) writerStmt(query string) (*sql.Stmt, error) {
	if st := j.stmts[query]; st != nil {
		return st, nil
	}
	st, err := j.db.Prepare(query)
	if err != nil {
		return nil, err
	}
	if j.stmts == nil {
		j.stmts = map[string]*sql.Stmt{}
	}
	j.stmts[query] = st
	return st, nil
}

// writer is the journal's single writer goroutine. A transaction takes every claim waiting (a
// due run waits for its claim) and, while no further claim waits, the other writes.
func (j *Journal) writer() {
	defer close(j.writerDone)
	defer func() {
		for _, st := range j.stmts {
			_ = st.Close()
		}
	}()
	for {
		var claims []claimReq
		var others []writeReq
		select {
		case c := <-j.claimQueue:
			claims = append(claims, c)
		case w := <-j.writes:
			others = append(others, w)
		case <-j.closed:
			return
		}
	gather:
		for len(claims)+len(others) < MaxBatch {
			select {
			case c := <-j.claimQueue:
				claims = append(claims, c)
				continue
			default:
			}
			select {
			case c := <-j.claimQueue:
				claims = append(claims, c)
			case w := <-j.writes:
				others = append(others, w)
			default:
				break gather
			}
		}
		j.commitBatch(claims, others)
	}
}

// commitBatch commits claims (decided in order, insertClaims) and other writes in one transaction.
func (j *Journal) commitBatch(claims []claimReq, others []writeReq) {
	span := runclock.Start()
	j.writing.Store(span)
	select {
	case j.writeBegan <- struct{}{}:
	default: // one notice is waiting already
	}
	defer func() {
		j.writing.Store(nil)
		span.End()
	}()
	resps := make([]claimResp, len(claims))
	errs := make([]error, len(others))
	err := func() error {
		if len(others) == 0 && len(claims) == 1 {
			// One claim alone: one short autocommitted statement, no BEGIN/COMMIT round trips.
			resps[0].id, resps[0].err = insertClaim(j.inWriter(nil), claims[0])
			return nil
		}
		tx, err := j.db.Begin()
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		if err := j.insertClaims(tx, claims, resps); err != nil {
			return err
		}
		for i, w := range others {
			if w.one {
				errs[i] = w.fn(tx)
			} else {
				errs[i] = inSavepoint(tx, w.fn)
			}
		}
		return tx.Commit()
	}()
	if err != nil {
		err = fmt.Errorf("journal commit: %w", err)
	}
	for i, c := range claims {
		if err != nil {
			resps[i] = claimResp{err: err}
		}
		c.resp <- resps[i]
	}
	for i, w := range others {
		if err != nil {
			errs[i] = err
		}
		w.resp <- errs[i]
	}
}

// inSavepoint runs fn so that its effects are undone if it fails.
func inSavepoint(tx *sql.Tx, fn func(tx *sql.Tx) error) error {
	if _, err := tx.Exec(`SAVEPOINT op`); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		if _, rerr := tx.Exec(`ROLLBACK TO op`); rerr != nil {
			return errors.Join(err, rerr)
		}
		_, _ = tx.Exec(`RELEASE op`)
		return err
	}
	_, err := tx.Exec(`RELEASE op`)
	return err
}

// WriteBegan returns a channel that receives after a write transaction has begun (WriteWaiting
// is then above 0 until it ends): a watcher of slow writes can sleep while the journal is idle.
// Notices do not queue: one waits at most, for any number of transactions begun since the last
// receive.
func (j *Journal) WriteBegan() <-chan struct{} { return j.writeBegan }

// WriteWaiting returns how long the writer's current transaction has been running while this
// process ran (0 when the writer is idle): monotonic, so a wall-clock step cannot fake or hide a
// slow write, and without the time the process was stopped (runclock), so a SIGSTOP in the
// middle of a write is not a slow journal. SQLite waits up to the busy timeout for another
// process's lock inside a transaction, so a long one means the journal is not accepting writes.
func (j *Journal) WriteWaiting() time.Duration {
	if span := j.writing.Load(); span != nil {
		return span.Elapsed()
	}
	return 0
}
