package ownership

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// staleBeats is how many heartbeat intervals without a new heartbeat make an owner
// "not-heartbeating" (DESIGN.md §3 "Wedged owner").
const staleBeats = 3

// stallGrace is how far past its due time a slot may be before an owner whose progress counter
// has not moved is "stalled": generous, since runs carry jitter and the scheduler may be busy.
const stallGrace = time.Minute

// recordSettle is how long Inspect waits for a new owner's record before believing that the
// guard holder and owner.json disagree.
const recordSettle = 50 * time.Millisecond

// Inspect reports, without taking ownership or touching the guard, who owns dir and every
// diagnosis that applies now. A single look has no history, so "not-heartbeating" and "stalled"
// are judged from the record's wall-clock times here; an Observer judges them on its own
// monotonic clock. It returns an error (wrapped) only when dir or /proc/locks cannot be read; a
// missing or garbage owner.json is a diagnosis, not an error.
func Inspect(dir string) (Status, error) {
	return inspect(dir, time.Now())
}

// inspect gathers the facts (guard, record, liveness, pending request) and the snapshot
// diagnoses.
func inspect(dir string, now time.Time) (Status, error) {
	st := Status{ObservedAt: now, Diagnoses: []Diagnosis{}}
	if _, err := os.Stat(dir); err != nil {
		return st, fmt.Errorf("inspect %s: %w", dir, err)
	}
	held, holder, err := guardHolder(dir)
	if err != nil {
		return st, err
	}
	st.Held, st.HolderPID = held, holder
	rec, recErr := readRecord(dir)
	if held && holder != 0 && (rec == nil || rec.PID != holder) {
		// A new owner writes its record a moment after locking; look again before reporting a
		// holder that owner.json does not describe.
		time.Sleep(recordSettle)
		rec, recErr = readRecord(dir)
	}
	st.Record = rec
	if rec != nil {
		st.HeartbeatAge = now.Sub(rec.HeartbeatAt)
		_, host := self()
		st.Alive = rec.Host == host && sameProcess(recordIdentity(rec))
	}
	if req, err := readRequest(dir); err == nil && req != nil && now.Before(req.ExpiresAt) &&
		rec != nil && req.TargetToken == rec.Token {
		st.PendingRequest = req
	}
	f := facts{status: st, recordErr: recErr}
	if rec != nil && rec.HeartbeatIntervalMS > 0 {
		iv := time.Duration(rec.HeartbeatIntervalMS) * time.Millisecond
		f.silentFor = st.HeartbeatAge
		f.stale = st.HeartbeatAge > staleBeats*iv
		f.stalled = !rec.NextDueAt.IsZero() && now.Sub(rec.NextDueAt) > stallGrace
	}
	st.Diagnoses = diagnose(f)
	return st, nil
}

// facts are the inputs of diagnose: the observed status plus the caller's judgement of the two
// time-based conditions (wall clock for Inspect, monotonic clock for Observer).
type facts struct {
	status    Status
	recordErr error
	stale     bool          // no new heartbeat for staleBeats intervals
	silentFor time.Duration // how long without a heartbeat, for the message
	stalled   bool          // work due past its grace and the progress counter did not move
}

// diagnose turns facts into findings a person can act on (DESIGN.md §3 "Wedged owner"; issue 3
// item 9). It has no authority: the guard alone decides who owns.
func diagnose(f facts) []Diagnosis {
	st, r := f.status, f.status.Record
	out := []Diagnosis{}
	add := func(k DiagnosisKind, since time.Time, format string, a ...any) {
		out = append(out, Diagnosis{Kind: k, Message: fmt.Sprintf(format, a...), Since: since})
	}
	if f.recordErr != nil && errors.Is(f.recordErr, errGarbage) && st.Held {
		add(DiagRecordUnreadable, time.Time{}, "%v; the owner rewrites it on its next heartbeat", f.recordErr)
	}
	if !st.Held {
		if r != nil && r.State != StateReleased && st.Alive {
			add(DiagGuardReplaced, time.Time{},
				"owner.json says pid %d owns, but owner.lock is not locked: the guard file was deleted or replaced; that owner stops admitting runs on its next heartbeat",
				r.PID)
		}
		return out
	}
	switch {
	case r == nil && st.HolderPID != 0:
		add(DiagLockHeldByOther, time.Time{}, "pid %d holds owner.lock but owner.json does not describe it", st.HolderPID)
		return out
	case r == nil:
		return out
	case !st.Alive:
		who := "an unknown process"
		if st.HolderPID != 0 {
			who = fmt.Sprintf("pid %d", st.HolderPID)
		}
		add(DiagLockHeldByOther, time.Time{},
			"owner.lock is held by %s, but the recorded owner (pid %d on %s) is not running; end %s to free the routines",
			who, r.PID, r.Host, who)
		return out
	case st.HolderPID != 0 && st.HolderPID != r.PID:
		add(DiagLockHeldByOther, time.Time{},
			"owner.lock is held by pid %d, not by the recorded owner pid %d (an inherited descriptor?); end pid %d to free the routines",
			st.HolderPID, r.PID, st.HolderPID)
		return out
	}
	if r.State == StateYielding {
		add(DiagDraining, r.YieldingSince, "the owner (pid %d) is handing over and waits for %d run(s) in flight to finish", r.PID, r.InFlight)
	}
	if f.stale {
		add(DiagNotHeartbeating, r.HeartbeatAt,
			"the owner (pid %d) is running but has not written a heartbeat for %s (suspended or wedged); `routinely daemon --takeover --kill-wedged` can end it",
			r.PID, f.silentFor.Round(time.Second))
	} else if f.stalled && r.State == StateOwning {
		add(DiagStalled, r.NextDueAt,
			"the owner (pid %d) heartbeats, but a run due at %s has not been handled (progress %d)",
			r.PID, r.NextDueAt.Local().Format(time.TimeOnly), r.Progress)
	}
	return out
}
