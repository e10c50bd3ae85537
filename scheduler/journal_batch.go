package scheduler

import (
	"time"
	"database/sql"
	"errors"
	"fmt"
)

// errJournalClosed: a write after Close.
var errJournalClosed = errors.New("journal closed")

// maxBatch bounds one group-commit transaction.
const maxBatch = 512

// writeReq is one write waiting for the journal's writer goroutine.
type writeReq struct {
	fn   func(tx *sql.Tx) error
	one  bool // fn modifies with a single statement: SQLite undoes it alone on failure
	resp chan error
}

// write runs fn in a transaction of the journal's single writer goroutine and returns fn's
// error (or the commit's). Writes queued while the previous transaction commits are committed
// together (group commit: one fsync for many claims), and one writer per process means this
// process's writers never meet SQLite's sleeping busy handler. Each fn runs inside a savepoint,
// so a failing fn leaves no partial effect and does not fail the others.
func (j *Journal) write(fn func(tx *sql.Tx) error) error {
	return j.enqueue(writeReq{fn: fn, resp: make(chan error, 1)})
}

// write1 is write for a fn whose only modification is one statement (a failing statement
// leaves nothing behind in SQLite), so it needs no savepoint: claims stay cheap in a batch.
func (j *Journal) write1(fn func(tx *sql.Tx) error) error {
	return j.enqueue(writeReq{fn: fn, one: true, resp: make(chan error, 1)})
}

func (j *Journal) enqueue(req writeReq) error {
	select {
	case j.writes <- req:
	case <-j.closed:
		return errJournalClosed
	}
	return <-req.resp
}

// writer is the journal's single writer goroutine.
func (j *Journal) writer() {
	defer close(j.writerDone)
	for {
		var batch []writeReq
		select {
		case req := <-j.writes:
			batch = append(batch, req)
		case <-j.closed:
			return
		}
	drain:
		for len(batch) < maxBatch {
			select {
			case req := <-j.writes:
				batch = append(batch, req)
			default:
				break drain
			}
		}
		t0 := time.Now()
		j.commitBatch(batch)
		DebugBatch.add(time.Duration(len(batch)) * time.Millisecond)
		DebugCommit.add(time.Since(t0))
	}
}

func (j *Journal) commitBatch(batch []writeReq) {
	errs := make([]error, len(batch))
	err := func() error {
		tx, err := j.db.Begin()
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		for i, req := range batch {
			if req.one {
				errs[i] = req.fn(tx)
			} else {
				errs[i] = inSavepoint(tx, req.fn)
			}
		}
		return tx.Commit()
	}()
	for i, req := range batch {
		if err != nil {
			errs[i] = fmt.Errorf("journal commit: %w", err)
		}
		req.resp <- errs[i]
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

// exec runs one statement through the writer.
func (j *Journal) exec(query string, args ...any) error {
	return j.write1(func(tx *sql.Tx) error {
		_, err := tx.Exec(query, args...)
		return err
	})
}
