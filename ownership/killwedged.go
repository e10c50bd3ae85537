package ownership

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// killGrace is how long a wedged owner gets between SIGTERM and SIGKILL; a
// variable so tests can shorten it.
var killGrace = 5 * time.Second

// afterKillWait bounds how long Takeover waits, once the wedged owner has been signalled, for the
// guard to come free: the kernel frees it as soon as the ended owner is gone, and an owner that
// resumed after SIGTERM to drain its runs releases it by itself.
const afterKillWait = 10 * time.Second

// NotWedgedError is why kill-wedged refused to signal the owner (errors.Is(err, ErrNotWedged)).
type NotWedgedError struct {
	// Reason says, for a person, which condition failed.
	Reason string
	// Silent is how long the owner has gone without a heartbeat, the shorter of the two
	// measures (this process's watch and the record's age); 0 when the refusal is not about time.
	Silent time.Duration
	// Threshold is the silence required before an owner is ended.
	Threshold time.Duration
	// Left is how much longer the owner must stay silent before kill-wedged may end it; 0 when
	// the refusal is not about time, or the owner heartbeats (a busy owner is never ended).
	Left time.Duration
}

// Error is ErrNotWedged's text followed by the reason.
func (e *NotWedgedError) Error() string { return ErrNotWedged.Error() + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrNotWedged) true.
func (e *NotWedgedError) Unwrap() error { return ErrNotWedged }

// TakenError says that once the wedged owner was gone, another process (typically a standby,
// `routinely daemon --wait`) won the guard before this one (errors.Is(err, ErrTakenByOther)).
type TakenError struct {
	// Ended is the wedged owner's record; nil when the guard was already free when checked.
	Ended *Record
	// Signal is how this process ended it: "SIGTERM", "SIGKILL" (TerminateProcess on
	// Windows), or "" when it exited by itself before being signalled.
	Signal string
	// Owner is the new owner's record; nil when owner.json does not describe the guard holder.
	Owner *Record
	// HolderPID is the process holding the guard when known (Linux /proc/locks), else 0.
	HolderPID int
}

// Error names the ended owner and the new one.
func (e *TakenError) Error() string {
	gone := "the wedged owner was already gone"
	if e.Ended != nil {
		gone = fmt.Sprintf("the wedged owner pid %d exited by itself", e.Ended.PID)
		if e.Signal != "" {
			gone = fmt.Sprintf("the wedged owner pid %d was ended (%s)", e.Ended.PID, e.Signal)
		}
	}
	who := "a process owner.json does not describe"
	switch {
	case e.Owner != nil:
		who = fmt.Sprintf("%s pid %d (epoch %d)", e.Owner.Role, e.Owner.PID, e.Owner.Epoch)
	case e.HolderPID != 0:
		who = fmt.Sprintf("pid %d (owner.json does not describe it)", e.HolderPID)
	}
	return fmt.Sprintf("%s: %s, then %s took the guard first", ErrTakenByOther, gone, who)
}

// Unwrap makes errors.Is(err, ErrTakenByOther) true.
func (e *TakenError) Unwrap() error { return ErrTakenByOther }

// killWedged ends an owner that is verifiably wedged (docs/design.md#39-kill-wedged): on this host,
// same uid, pid and start time still matching the record, the guard held by that process, and not
// heartbeating for at least threshold both on obs's monotonic clock (obs must have been
// observing, as the challenger's observer has) and by the record's wall-clock age. It re-checks
// the identity right before each signal, sends SIGTERM, waits up to killGrace (5 s) for the
// process to exit, then SIGKILL (Windows: TerminateProcess both times) unless it heartbeats
// again meanwhile (see awaitTerminated). pid, when not 0, is the only owner it may end: another
// is refused with a *NotWedgedError.
//
// It returns the record of the owner it judged wedged (nil when the guard was free by then) and
// the last signal it sent ("SIGTERM", "SIGKILL", or "" when the owner went away before being
// signalled), with a nil error when the owner is gone (ended, or went by itself) or is shutting
// down in good order. Errors: the error of obs.Observe; *NotWedgedError (errors.Is ErrNotWedged)
// with the reason when any condition fails; ctx.Err() when ctx ends while waiting; the signal
// error (wrapped). An owner with a fresh heartbeat is never signalled: busy is not wedged.
func killWedged(ctx context.Context, obs *Observer, threshold time.Duration, pid int, log *slog.Logger) (*Record, string, error) {
	st, err := obs.Observe()
	if err != nil {
		return nil, "", err
	}
	if !st.Held {
		return nil, "", nil // it went away by itself
	}
	if r := st.Record; pid != 0 && (r == nil || r.PID != pid) {
		now := "an unknown process"
		if r != nil {
			now = fmt.Sprintf("pid %d", r.PID)
		}
		return nil, "", &NotWedgedError{Threshold: threshold,
			Reason: fmt.Sprintf("the owner is now %s, not pid %d that was to be ended: nothing was signalled", now, pid)}
	}
	if err := notWedged(st, obs.unchangedFor(), threshold); err != nil {
		return nil, "", err
	}
	r := st.Record
	id := recordIdentity(r)
	log.Warn("ending wedged owner", "pid", r.PID, "heartbeat_age", st.HeartbeatAge)
	if !sameProcess(id) {
		return r, "", nil
	}
	if err := terminate(r.PID); err != nil {
		return r, "", fmt.Errorf("terminate wedged owner pid %d: %w", r.PID, err)
	}
	if settled, err := awaitTerminated(ctx, obs, r, killGrace, log); settled || err != nil {
		return r, "SIGTERM", err
	}
	if !sameProcess(id) {
		return r, "SIGTERM", nil
	}
	if err := kill(r.PID); err != nil {
		return r, "SIGTERM", fmt.Errorf("kill wedged owner pid %d: %w", r.PID, err)
	}
	return r, "SIGKILL", nil
}

// notWedged returns a *NotWedgedError saying why the owner seen in st (guard held) may not be
// ended, or nil when it is verifiably wedged: its record describes it, it runs on this host as
// this user, it is the process holding the guard, and it has been silent for threshold both by
// its record (st.HeartbeatAge) and as this process watched it (quiet).
func notWedged(st Status, quiet, threshold time.Duration) error {
	r := st.Record
	host := selfHost()
	refuse := func(format string, a ...any) error {
		return &NotWedgedError{Reason: fmt.Sprintf(format, a...), Threshold: threshold}
	}
	holder := "another process"
	if st.HolderPID != 0 {
		holder = fmt.Sprintf("pid %d", st.HolderPID)
	}
	switch {
	case r == nil:
		return refuse("owner.json does not say who holds owner.lock (held by %s), so nothing can be verified", holder)
	case r.Host != host:
		return refuse("the owner runs on %s, not on this host: only that host can tell whether it is wedged", r.Host)
	case r.UID != os.Getuid():
		return refuse("the owner runs as uid %d, not as this user", r.UID)
	case !st.Alive:
		return refuse("owner.lock is held by %s, but the recorded owner pid %d is not running (or its pid now names another process); end %s to free the routines ('routinely status' shows it)",
			holder, r.PID, holder)
	case st.HolderPID != 0 && st.HolderPID != r.PID:
		return refuse("owner.lock is held by pid %d, not by the recorded owner pid %d (an inherited descriptor?); only a verified owner is ever ended: end pid %d yourself if it should not hold the routines",
			st.HolderPID, r.PID, st.HolderPID)
	case r.JournalUnwritable != nil:
		// A full disk stops the journal first and then, on copy-on-write filesystems, the
		// record too: the silence is then the disk's, not a wedged process's.
		return refuse("the owner pid %d last reported that its journal cannot be written (%s), so it is most likely alive on a full disk: free space rather than ending it",
			r.PID, r.JournalUnwritable.Error)
	}
	silent := min(quiet, st.HeartbeatAge)
	if silent >= threshold {
		return nil
	}
	age := st.HeartbeatAge.Round(100 * time.Millisecond)
	if st.HeartbeatAge <= staleBeats*heartbeatInterval(r) {
		return &NotWedgedError{Silent: silent, Threshold: threshold,
			Reason: fmt.Sprintf("the owner pid %d heartbeats (last %s ago): it is busy, not wedged, and a busy owner is never ended", r.PID, age)}
	}
	left := threshold - silent
	why := fmt.Sprintf("the owner pid %d has not written a heartbeat for %s, and an owner is ended only after %s without one: %s to go",
		r.PID, age, threshold, left.Round(100*time.Millisecond))
	if st.HeartbeatAge >= threshold {
		// Its record is old enough, but a wall-clock step could fake that: this process must
		// have seen the silence on its own monotonic clock too.
		why = fmt.Sprintf("the owner pid %d has not written a heartbeat for %s, but this command watched it for only %s, and it must itself see %s without a heartbeat before ending an owner: %s to go",
			r.PID, age, quiet.Round(100*time.Millisecond), threshold, left.Round(100*time.Millisecond))
	}
	return &NotWedgedError{Silent: silent, Threshold: threshold, Left: left, Reason: why}
}

// awaitTerminated waits up to grace, polling every 50 ms, for the owner r to act on SIGTERM. It
// returns true when the process is gone, or when it heartbeats again: it was continued and is
// shutting down in good order (draining its runs), and an owner with a fresh heartbeat is never
// signalled; the caller's bounded wait then takes the guard once it lets go. It returns false when
// grace passes with the owner still silent, and ctx.Err() when ctx ends first.
func awaitTerminated(ctx context.Context, obs *Observer, r *Record, grace time.Duration, log *slog.Logger) (bool, error) {
	id := recordIdentity(r)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !sameProcess(id) {
			return true, nil
		}
		if st, err := obs.Observe(); err == nil && st.Record != nil && st.Record.Token == r.Token &&
			!st.Record.HeartbeatAt.Equal(r.HeartbeatAt) {
			log.Warn("wedged owner heartbeats again after SIGTERM; not killing it", "pid", r.PID)
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false, nil
}

// ownAfterKill takes the guard once killWedged has dealt with the wedged owner ended (nil when
// the guard was already free), trying every 20 ms (waitPoll) for up to afterKillWait. It returns
// the Handle when this process owns. Errors: *TakenError (errors.Is ErrTakenByOther) when
// another process owns instead (a standby was quicker: a fresh record with another token, of a
// live process holding the guard, or at the deadline any other holder); ErrStillDraining
// (wrapped) when at the deadline the ended owner still holds the guard, having resumed after
// SIGTERM to finish its runs in flight (or, after SIGKILL, not yet exited); ctx.Err(); those of
// Acquire except ErrOwned.
func ownAfterKill(ctx context.Context, opts Options, obs *Observer, ended *Record, signal string) (*Handle, error) {
	w := newDirWatcher(opts.Dir, opts.Logger)
	deadline := time.Now().Add(afterKillWait)
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		h, err := tryAcquire(opts, w)
		if h != nil {
			return h, nil
		}
		if err != nil {
			w.close()
			return nil, err
		}
		st, _ := obs.Observe()
		if r := st.Record; st.Held && r != nil && (ended == nil || r.Token != ended.Token) && st.Alive &&
			r.State != StateReleased && (st.HolderPID == 0 || st.HolderPID == r.PID) {
			w.close()
			return nil, &TakenError{Ended: ended, Signal: signal, Owner: r, HolderPID: st.HolderPID}
		}
		if !time.Now().Before(deadline) {
			w.close()
			if ended != nil && st.Held && sameProcess(recordIdentity(ended)) {
				if signal == "SIGKILL" {
					return nil, fmt.Errorf("%w: the wedged owner pid %d has not exited %s after SIGKILL (stuck in the kernel?)",
						ErrStillDraining, ended.PID, afterKillWait)
				}
				return nil, fmt.Errorf("%w: the owner pid %d resumed after SIGTERM and is finishing its runs in flight; it releases the routines when they end",
					ErrStillDraining, ended.PID)
			}
			return nil, &TakenError{Ended: ended, Signal: signal, HolderPID: st.HolderPID}
		}
		select {
		case <-ctx.Done():
			w.close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// EndWedgedOptions configure EndWedged.
type EndWedgedOptions struct {
	// Threshold is the silence (no heartbeat) required before the owner is ended; 0 → 30 s, the
	// same default as `daemon --takeover --kill-wedged`.
	Threshold time.Duration
	// PID, when not 0, is the owner the person agreed to end: if the guard's owner is another
	// process by now, nothing is signalled (*NotWedgedError saying so).
	PID int
}

// CheckWedged reports whether the owner seen in st (from this Observer's latest Observe) may be
// ended by EndWedged now: nil when it is verifiably wedged — the kill-wedged rules of
// docs/design.md#39-kill-wedged, with threshold (0 → 30 s) held both on this Observer's monotonic
// clock and by the record's age — else a *NotWedgedError (errors.Is ErrNotWedged) with the
// reason and, when the refusal is only about time, Left > 0. A st with the guard free is
// refused too (nothing to end). It signals nothing.
func (o *Observer) CheckWedged(st Status, threshold time.Duration) error {
	if threshold <= 0 {
		threshold = defaultWedgeThreshold
	}
	if !st.Held {
		return &NotWedgedError{Reason: "nobody holds the routines", Threshold: threshold}
	}
	return notWedged(st, o.unchangedFor(), threshold)
}

// EndWedged ends an owner that is verifiably wedged and then owns, without asking it first
// (a wedged owner cannot answer a takeover request): it is Takeover's kill-wedged step on its
// own, for a person who has watched the owner through obs (the desktop app's banner) and
// agreed to end it. obs must be the Observer that watched the silence: the threshold must hold
// on its monotonic clock. The rules, the signals and the wait for the guard are killWedged's and
// ownAfterKill's (docs/design.md#39-kill-wedged).
//
// It returns the Handle once this process owns. Errors: those of normalize (an unsafe state
// directory); *NotWedgedError (errors.Is ErrNotWedged) with the reason when the owner may not be
// ended, including when it is not e.PID; the signal error; *TakenError (errors.Is
// ErrTakenByOther) when a standby won the guard; ErrStillDraining (wrapped); ctx.Err(); those of
// Acquire except ErrOwned.
func EndWedged(ctx context.Context, opts Options, obs *Observer, e EndWedgedOptions) (*Handle, error) {
	opts, err := normalize(opts)
	if err != nil {
		return nil, err
	}
	if e.Threshold <= 0 {
		e.Threshold = defaultWedgeThreshold
	}
	return endWedged(ctx, opts, obs, e.Threshold, e.PID)
}

// endWedged is the kill-wedged step shared by Takeover and EndWedged: killWedged, then
// ownAfterKill. pid, when not 0, is the only owner it may end. opts are normalized.
func endWedged(ctx context.Context, opts Options, obs *Observer, threshold time.Duration, pid int) (*Handle, error) {
	ended, signal, err := killWedged(ctx, obs, threshold, pid, opts.Logger)
	if err != nil {
		return nil, err
	}
	return ownAfterKill(ctx, opts, obs, ended, signal)
}
