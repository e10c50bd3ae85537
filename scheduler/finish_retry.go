package scheduler

import (
	"errors"
	"fmt"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// Finish retry: a run's end that cannot be written for a transient reason (SQLITE_BUSY from a
// writer in another process, a full disk that recovers) is retried a few times rather than
// leaving the row `running` until the next owner marks it `interrupted` and loses the real
// outcome.
const (
	finishTries   = 5                      // attempts in all
	finishBackoff = 125 * time.Millisecond // first wait; doubled after each failure (125+250+500+1000 ms ≈ 1.9 s)
)

// finishWithRetry records the end of run id (of routine name), retrying failures that may pass
// (finishTries attempts with doubling waits starting at finishBackoff, on the engine clock) and
// logging each failed attempt. Errors: the last attempt's error, wrapped with the attempt
// count; a permanent error (ErrFenced, ErrNoRun, ErrReadOnly, a closed journal) at once.
func (e *Engine) finishWithRetry(name string, id int64, f journal.Result) error {
	wait := finishBackoff
	for try := 1; ; try++ {
		err := e.j.Finish(id, f)
		if err == nil {
			if try > 1 {
				e.log.Info("run recorded after retrying", "routine", name, "run", id, "attempts", try)
			}
			return nil
		}
		if finishPermanent(err) {
			return err
		}
		if try == finishTries {
			return fmt.Errorf("after %d attempts: %w", try, err)
		}
		e.log.Warn("record run failed; retrying", "routine", name, "run", id, "attempt", try, "retry_in", wait, "err", err)
		<-e.clock.After(wait)
		wait *= 2
	}
}

// finishPermanent reports whether retrying Finish cannot help: the run belongs to a newer owner
// now, does not exist, or the journal cannot be written through at all.
func finishPermanent(err error) bool {
	return errors.Is(err, journal.ErrFenced) || errors.Is(err, journal.ErrNoRun) || errors.Is(err, journal.ErrReadOnly) ||
		errors.Is(err, journal.ErrClosed)
}
