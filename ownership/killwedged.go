package ownership

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// killGrace is how long a wedged owner gets between SIGTERM and SIGKILL (issue 3 item 10).
var killGrace = 5 * time.Second

// killWedged ends an owner that is verifiably wedged (DESIGN.md §3 "Wedged owner"): on this host,
// same uid, pid and start time still matching the record, and not heartbeating for at least
// threshold both on obs's monotonic clock and by the record's wall-clock age. It re-checks the
// identity right before each signal, sends SIGTERM, waits up to 5 s for the process to exit, then
// SIGKILL (Windows: TerminateProcess). Errors: ErrNotWedged (wrapped,
// with the reason) when any condition fails; the signal error (wrapped) otherwise. An owner with a
// fresh heartbeat is never signalled: busy is not wedged.
func killWedged(ctx context.Context, dir string, obs *Observer, threshold time.Duration, log *slog.Logger) error {
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
	deadline := time.Now().Add(killGrace)
	for sameProcess(id) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !sameProcess(id) {
		return nil
	}
	if err := kill(r.PID); err != nil {
		return fmt.Errorf("kill wedged owner pid %d: %w", r.PID, err)
	}
	return nil
}
