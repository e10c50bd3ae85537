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
	prog := startProgress(ctx, e.rawStderr)
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
		return nil, fmt.Errorf("%w: %s keeps the routines.\nAsk its user to approve, or stop it; '"+progName+" status' shows it", ownership.ErrDenied, who)
	case errors.Is(err, ownership.ErrTakeoverTimeout):
		hint := "Nobody approved in time; the request was withdrawn and the owner keeps running."
		if owner != nil && owner.Role == ownership.RoleDesktop {
			hint = "Nobody approved in the Routinely app in time; the request was withdrawn and the app keeps running.\n" +
				"Retry and approve in its tray menu or window, or quit it from its tray menu."
		}
		if !o.killWedged {
			hint += "\nIf '" + progName + " status' reports it not-heartbeating, retry with --kill-wedged."
		}
		return nil, fmt.Errorf("%w after %s: %s did not hand over.\n%s", ownership.ErrTakeoverTimeout, o.timeout, who, hint)
	case errors.Is(err, ownership.ErrNotWedged):
		return nil, notWedgedErr(err, who, o)
	case errors.Is(err, ownership.ErrTakenByOther):
		return nil, takenErr(err, e)
	case errors.Is(err, ownership.ErrStillDraining):
		return nil, fmt.Errorf("%w.\nRun '"+progName+" daemon --wait' to stand by and own as soon as it has released", err)
	case errors.Is(err, context.Canceled):
		return nil, withCode(ExitTempFail, fmt.Errorf("takeover cancelled; the request was withdrawn and %s keeps the routines", who))
	}
	return nil, fmt.Errorf("takeover: %w", err)
}

// notWedgedErr is the refusal of --kill-wedged to end the owner who: the reason it was not
// signalled, and what to do. err is or wraps a *ownership.NotWedgedError.
func notWedgedErr(err error, who string, o daemonOptions) error {
	var nw *ownership.NotWedgedError
	if !errors.As(err, &nw) {
		return fmt.Errorf("%w: %s was not signalled.\nWait for it, or stop it yourself", err, who)
	}
	hint := "Wait for it, or stop it yourself."
	switch {
	case nw.Left > 0 && o.timeout < nw.Threshold:
		hint = fmt.Sprintf("Retry with --timeout %s or more: this command must itself see the owner silent for %s.", nw.Threshold, nw.Threshold)
	case nw.Left > 0:
		hint = fmt.Sprintf("Retry in %s if it is still silent then ('"+progName+" status' shows its heartbeat).", fmtDur(nw.Left))
	}
	return fmt.Errorf("%w, so %s was not signalled: %s.\n%s", ownership.ErrNotWedged, who, nw.Reason, hint)
}

// takenErr says that kill-wedged ended the wedged owner but another process (a standby) took the
// routines first. err is or wraps a *ownership.TakenError.
func takenErr(err error, e *env) error {
	var te *ownership.TakenError
	if !errors.As(err, &te) {
		return err
	}
	gone := "the wedged owner was already gone"
	if r := te.Ended; r != nil {
		gone = fmt.Sprintf("the wedged owner (pid %d) exited by itself", r.PID)
		if te.Signal != "" {
			gone = fmt.Sprintf("this daemon ended the wedged owner (pid %d, %s)", r.PID, te.Signal)
		}
	}
	who := "a process that owner.json does not describe"
	switch {
	case te.Owner != nil:
		who = describeOwner(te.Owner, e.now())
	case te.HolderPID != 0:
		who = fmt.Sprintf("pid %d (owner.json does not describe it)", te.HolderPID)
	}
	return fmt.Errorf("%w: %s, and then %s got the guard before this daemon did, so this daemon does not own them.\n"+
		"Nothing is left to end: '"+progName+" status' shows the new owner", ownership.ErrTakenByOther, gone, who)
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
