package ownership

import (
	"fmt"
	"os"
	"time"

	"github.com/routinely/routinely/internal/skew"
)

// recordSettle is how long a look waits for a new owner's record before believing that the
// guard holder and owner.json disagree: a new owner writes its record a moment after locking.
const recordSettle = 50 * time.Millisecond

// Inspect reports, without taking ownership, who owns dir and every diagnosis that applies now.
// On Linux it reads /proc/locks and never touches the guard; elsewhere it probes it with a brief
// TryLock+Unlock (see guardHolder), which a concurrent contender may see as busy for
// microseconds. A single look has no history, so "not-heartbeating" and "stalled" are judged from
// the record's wall-clock times here; an Observer judges them on its own monotonic clock. It
// returns an error (wrapped) only when dir or /proc/locks cannot be read; a missing or garbage
// owner.json is a diagnosis, not an error.
func Inspect(dir string) (Status, error) {
	f, err := look(dir)
	if err != nil {
		return f.status, err
	}
	f.judgeByWallClock()
	f.status.Diagnoses = diagnose(f)
	return f.status, nil
}

// look gathers the facts of one look at dir: whether the guard is held and by whom, owner.json
// (and why it could not be read), whether its process is alive, and a pending request addressed
// to it. The time-based facts and the diagnoses are left to the caller. Errors as for Inspect.
func look(dir string) (facts, error) {
	st := Status{ObservedAt: time.Now(), Diagnoses: []Diagnosis{}}
	if _, err := os.Stat(dir); err != nil {
		return facts{status: st}, fmt.Errorf("inspect %s: %w", dir, err)
	}
	held, holder, err := guardHolder(dir)
	if err != nil {
		return facts{status: st}, err
	}
	st.Held, st.HolderPID = held, holder
	rec, recErr := readRecord(dir)
	if held && holder != 0 && (rec == nil || rec.PID != holder) {
		time.Sleep(recordSettle)
		rec, recErr = readRecord(dir)
	}
	st.Record = rec
	if rec != nil {
		// ObservedAt was taken before the read: a heartbeat written since is "just now".
		st.HeartbeatAge = skew.Age(rec.HeartbeatAt, st.ObservedAt)
		host := selfHost()
		st.Alive = rec.Host == host && sameProcess(recordIdentity(rec))
		if req, err := readRequest(dir); err == nil && req != nil && req.TargetToken == rec.Token &&
			st.ObservedAt.Before(req.ExpiresAt) {
			st.PendingRequest = req
		}
	}
	return facts{status: st, recordErr: recErr}, nil
}
