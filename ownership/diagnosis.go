package ownership

import (
	"errors"
	"fmt"
	"time"

	"github.com/routinely/routinely/internal/skew"
)

// staleBeats is how many heartbeat intervals without a new heartbeat make an owner
// "not-heartbeating" (docs/design.md#38-observers-inspect-and-wedge-diagnoses).
const staleBeats = 3

// stallGrace is how far past its due time a slot may be before an owner whose progress counter
// has not moved is "stalled": generous, since runs carry jitter and the scheduler may be busy.
const stallGrace = time.Minute

// DiagnosisKind names one way an owner can look unhealthy (docs/design.md#38-observers-inspect-and-wedge-diagnoses).
type DiagnosisKind string

// Diagnosis kinds, as printed by `routinely status` and shown in the app's banner.
const (
	DiagNotHeartbeating  DiagnosisKind = "not-heartbeating"
	DiagStalled          DiagnosisKind = "stalled"
	DiagLockHeldByOther  DiagnosisKind = "lock-held-by-other"
	DiagDraining         DiagnosisKind = "draining"
	DiagGuardReplaced    DiagnosisKind = "guard-replaced"
	DiagRecordUnreadable DiagnosisKind = "record-unreadable"
	// DiagJournalUnwritable: the owner is alive and heartbeating but its journal refuses writes
	// (another process holds its lock, the disk is full), so no run starts.
	DiagJournalUnwritable DiagnosisKind = "journal-unwritable"
	// DiagJournalReplaced: the owner's open journal file is no longer the one at its path
	// (journal.db deleted or replaced), so no run starts until it has one there again.
	DiagJournalReplaced DiagnosisKind = "journal-replaced"
)

// Diagnosis is one finding about the owner, with a sentence a person can act on.
type Diagnosis struct {
	Kind    DiagnosisKind `json:"kind"`
	Message string        `json:"message"`
	Since   time.Time     `json:"since,omitempty"`
}

// Status is what an observer knows about ownership of a state directory at one instant.
type Status struct {
	// Held reports whether the guard is locked by some process (the only authority).
	Held bool `json:"held"`
	// Record is owner.json as read (nil when missing or unreadable).
	Record *Record `json:"record,omitempty"`
	// Alive: the recorded pid exists and its start time matches (EPERM counts as alive).
	Alive bool `json:"alive"`
	// HolderPID is the process that really holds the guard when known (Linux /proc/locks), else 0.
	HolderPID int `json:"holder_pid,omitempty"`
	// HeartbeatAge is how long before ObservedAt the record's heartbeat was, never negative
	// (skew.Age: a heartbeat stamped after the observation is age 0).
	HeartbeatAge   time.Duration `json:"heartbeat_age_ns"`
	Diagnoses      []Diagnosis   `json:"diagnoses"`
	ObservedAt     time.Time     `json:"observed_at"`
	PendingRequest *Request      `json:"pending_request,omitempty"`
}

// Healthy reports whether an owner holds the guard and no diagnosis was made.
func (s Status) Healthy() bool { return s.Held && len(s.Diagnoses) == 0 }

// facts are the inputs of diagnose: what one look saw (look) plus the judgement of the two
// time-based conditions, made from the record's wall-clock times (judgeByWallClock) or on an
// Observer's monotonic clock (Observer.track).
type facts struct {
	status    Status
	recordErr error         // why owner.json could not be read (nil when fine or missing)
	stale     bool          // no new heartbeat for staleBeats intervals
	silentFor time.Duration // how long without a heartbeat, for the message
	stalled   bool          // work due past its grace and the progress counter did not move
}

// heartbeatInterval returns the record's heartbeat interval, or DefaultHeartbeat when it does not
// say.
func heartbeatInterval(r *Record) time.Duration {
	if r.HeartbeatIntervalMS <= 0 {
		return DefaultHeartbeat
	}
	return time.Duration(r.HeartbeatIntervalMS) * time.Millisecond
}

// judgeByWallClock judges staleness and stall from the record's own timestamps, for a look with
// no history: the heartbeat is older than staleBeats intervals, or the next due slot is more
// than stallGrace in the past.
func (f *facts) judgeByWallClock() {
	r := f.status.Record
	if r == nil {
		return
	}
	f.silentFor = f.status.HeartbeatAge
	f.stale = f.silentFor > staleBeats*heartbeatInterval(r)
	f.stalled = !r.NextDueAt.IsZero() && f.status.ObservedAt.Sub(r.NextDueAt) > stallGrace
}

// diagnose turns facts into findings a person can act on (docs/design.md#38-observers-inspect-and-wedge-diagnoses). It has no authority: the guard alone decides who owns.
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
		add(DiagDraining, r.YieldingSince, "the owner (pid %d) is stopping (shutting down or handing over) and waits for %d run(s) in flight to finish", r.PID, r.InFlight)
	}
	// A claim refused because journal.db is gone is journal trouble too; journal-replaced says
	// it all, and journal-unwritable's advice (a lock, a full disk) would mislead.
	if jt := r.JournalUnwritable; jt != nil && !f.stale && r.JournalReplaced == nil {
		add(DiagJournalUnwritable, jt.Since,
			"the owner (pid %d) cannot write the journal since %s (%s): %s. No run starts without its claim; the slots due meanwhile are recorded missed once it can. Look for another process holding journal.db in the state directory (`fuser -v journal.db`) or a full disk (`df .`)",
			r.PID, jt.Since.Local().Format(time.TimeOnly), skew.Age(jt.Since, st.ObservedAt).Round(time.Second), jt.Error)
	}
	if jr := r.JournalReplaced; jr != nil && !f.stale {
		add(DiagJournalReplaced, jr.Since,
			"the owner (pid %d) found at %s that journal.db is not the file it has open (%s): no run starts. When journal.db was only deleted, the owner puts the file it has open back once its runs in flight end, and the slots due meanwhile are recorded; when another file is there, it is left alone and nothing runs: move that file aside to have the owner put the journal back, or stop the owner and start it again to use the new file (its history lacks what the owner recorded since)",
			r.PID, jr.Since.Local().Format(time.TimeOnly), jr.Error)
	}
	switch {
	case f.stale && r.JournalUnwritable != nil:
		// A disk that refuses the journal's writes may refuse owner.json's too: the owner may be
		// healthy, only unable to say so. Ending it would fix nothing.
		add(DiagNotHeartbeating, r.HeartbeatAt,
			"the owner (pid %d) has not written a heartbeat for %s, and its last one said it cannot write the journal (%s): the disk is probably full or read-only, which stops the heartbeat too. Free space (`df .` in the state directory) rather than ending the owner",
			r.PID, f.silentFor.Round(time.Second), r.JournalUnwritable.Error)
	case f.stale:
		add(DiagNotHeartbeating, r.HeartbeatAt,
			"the owner (pid %d) is running but has not written a heartbeat for %s (suspended or wedged); `routinely daemon --takeover --kill-wedged` can end it",
			r.PID, f.silentFor.Round(time.Second))
	case f.stalled && r.State == StateOwning && r.JournalUnwritable == nil && r.JournalReplaced == nil:
		add(DiagStalled, r.NextDueAt,
			"the owner (pid %d) heartbeats, but a run due at %s has not been handled (progress %d)",
			r.PID, r.NextDueAt.Local().Format(time.TimeOnly), r.Progress)
	}
	return out
}
