package ownership

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// killGrace is how long a wedged owner gets between SIGTERM and SIGKILL (issue 3 item 10); a
// variable so tests can shorten it.
var killGrace = 5 * time.Second

// killWedged ends an owner that is verifiably wedged (DESIGN.md §3 "Wedged owner"): on this host,
// same uid, pid and start time still matching the record, the guard held by that process, and not
// heartbeating for at least threshold both on obs's monotonic clock (obs must have been
// observing, as the challenger's observer has) and by the record's wall-clock age. It re-checks
// the identity right before each signal, sends SIGTERM, waits up to killGrace (5 s) for the
// process to exit, then SIGKILL (Windows: TerminateProcess both times) unless it heartbeats
// again meanwhile (see awaitTerminated). It returns nil when the owner is gone (ended, or already
// went by itself) or is shutting down in good order. Errors: the error of obs.Observe; ErrNotWedged
// (wrapped, with the reason) when any condition fails; ctx.Err() when ctx ends while waiting; the
// signal error (wrapped). An owner with a fresh heartbeat is never signalled: busy is not wedged.
func killWedged(ctx context.Context, obs *Observer, threshold time.Duration, log *slog.Logger) error {
	st, err := obs.Observe()
	if err != nil {
		return err
	}
	r := st.Record
	_, host := self()
	switch {
	case !st.Held:
		return nil // it went away by itself
	case r == nil:
		return fmt.Errorf("%w: owner.json does not say who owns", ErrNotWedged)
	case r.Host != host:
		return fmt.Errorf("%w: the owner runs on %s, not on this host", ErrNotWedged, r.Host)
	case r.UID != os.Getuid():
		return fmt.Errorf("%w: the owner runs as uid %d", ErrNotWedged, r.UID)
	case !st.Alive || (st.HolderPID != 0 && st.HolderPID != r.PID):
		return fmt.Errorf("%w: the guard holder is not the recorded owner pid %d (see `routinely status`)", ErrNotWedged, r.PID)
	}
	if quiet := obs.unchangedFor(); quiet < threshold || st.HeartbeatAge < threshold {
		return fmt.Errorf("%w: owner pid %d heartbeat is fresh (unchanged for %s, threshold %s); it is busy, not wedged",
			ErrNotWedged, r.PID, quiet.Round(time.Millisecond), threshold)
	}
	id := recordIdentity(r)
	log.Warn("ending wedged owner", "pid", r.PID, "heartbeat_age", st.HeartbeatAge)
	if !sameProcess(id) {
		return nil
	}
	if err := terminate(r.PID); err != nil {
		return fmt.Errorf("terminate wedged owner pid %d: %w", r.PID, err)
	}
	if settled, err := awaitTerminated(ctx, obs, r, killGrace, log); settled || err != nil {
		return err
	}
	if !sameProcess(id) {
		return nil
	}
	if err := kill(r.PID); err != nil {
		return fmt.Errorf("kill wedged owner pid %d: %w", r.PID, err)
	}
	return nil
}

// awaitTerminated waits up to grace, polling every 50 ms, for the owner r to act on SIGTERM. It
// returns true when the process is gone, or when it heartbeats again: it was continued and is
// shutting down in good order (draining its runs), and an owner with a fresh heartbeat is never
// signalled; the caller's bounded Wait then takes the guard once it lets go. It returns false when
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
