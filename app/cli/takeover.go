package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
)

// takeover asks the current owner to hand over, showing progress on stderr, and returns the new
// handle. Denied, timed out, refused kill or cancelled: an error that exits 75 naming the owner.
func takeover(ctx context.Context, e *env, p paths.Paths, opts ownership.Options, o daemonOptions) (*ownership.Handle, error) {
	prog := startProgress(ctx, e.stderr)
	var owner *ownership.Record
	h, err := ownership.Takeover(ctx, opts, ownership.TakeoverOptions{
		Timeout:        o.timeout,
		Reason:         "routinely daemon --takeover",
		KillWedged:     o.killWedged,
		WedgeThreshold: o.wedgeAfter,
		Progress: func(tp ownership.TakeoverProgress) {
			if tp.Owner != nil {
				owner = tp.Owner
			}
			prog.Set(takeoverMessage(tp, o))
		},
	})
	prog.Stop()
	if err == nil {
		if owner == nil {
			fmt.Fprintf(e.stderr, "Nobody owned the routines, so there was no one to ask: this daemon owns them (epoch %d).\n", h.Epoch())
		} else {
			fmt.Fprintf(e.stderr, "Took over from %s: this daemon owns the routines (epoch %d).\n", describeOwner(owner, e.now()), h.Epoch())
		}
		return h, nil
	}
	if owner == nil {
		if st, ierr := ownership.Inspect(p.State); ierr == nil {
			owner = st.Record
		}
	}
	who := describeOwner(owner, e.now())
	switch {
	case errors.Is(err, ownership.ErrDenied):
		return nil, fmt.Errorf("%w: %s keeps the routines.\nAsk its user to approve, or stop it; 'routinely status' shows it", ownership.ErrDenied, who)
	case errors.Is(err, ownership.ErrTakeoverTimeout):
		hint := "Nobody approved in time; the request was withdrawn and the owner keeps running."
		if owner != nil && owner.Role == ownership.RoleDesktop {
			hint = "Nobody approved in the Routinely app in time; the request was withdrawn and the app keeps running.\n" +
				"Retry and approve in its tray menu or window, or quit it from its tray menu."
		}
		if !o.killWedged {
			hint += "\nIf 'routinely status' reports it not-heartbeating, retry with --kill-wedged."
		}
		return nil, fmt.Errorf("%w after %s: %s did not hand over.\n%s", ownership.ErrTakeoverTimeout, o.timeout, who, hint)
	case errors.Is(err, ownership.ErrNotWedged):
		return nil, fmt.Errorf("%w: %s is busy, not wedged, so it was not signalled.\nWait for it, or stop it yourself", ownership.ErrNotWedged, who)
	case errors.Is(err, context.Canceled):
		return nil, withCode(ExitTempFail, fmt.Errorf("takeover cancelled; the request was withdrawn and %s keeps the routines", who))
	}
	return nil, fmt.Errorf("takeover: %w", err)
}

// takeoverMessage is the progress line for one takeover state.
func takeoverMessage(tp ownership.TakeoverProgress, o daemonOptions) string {
	who := "the owner"
	if tp.Owner != nil {
		who = fmt.Sprintf("the %s (pid %d)", roleName(tp.Owner.Role), tp.Owner.PID)
	}
	switch tp.Decision {
	case ownership.DecisionPending:
		if tp.Owner != nil && tp.Owner.Role == ownership.RoleDesktop {
			return "waiting for approval in the Routinely app…"
		}
		return "waiting for approval from " + who + "…"
	case ownership.DecisionApproved:
		return who + " approved; waiting for its runs in flight to finish…"
	case ownership.DecisionDenied:
		return who + " denied the takeover"
	default:
		return fmt.Sprintf("asking %s to hand over (timeout %s)…", who, o.timeout)
	}
}
