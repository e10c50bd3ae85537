package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/app/owning"
	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

type daemonOptions struct {
	takeover   bool
	wait       bool
	killWedged bool
	timeout    time.Duration
	timeoutSet bool // --timeout given: bounds --wait too
	onTakeover string
	heartbeat  time.Duration // hidden: owner heartbeat interval (tests use a short one)
	wedgeAfter time.Duration // hidden: stale heartbeat --kill-wedged needs (default 30s)
}

// newDaemonCmd builds `routinely daemon`: flags and help; the work is runDaemon's.
func newDaemonCmd(e *env) *cobra.Command {
	o := daemonOptions{timeout: 60 * time.Second, onTakeover: string(ownership.PolicyAllow)}
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Own the schedule headless and run the routines until stopped",
		Long: fmt.Sprintf(`Run the routines of routines.toml without the desktop app, logging to stderr. Once it owns, it
prints one line: the epoch, how many routines and which runs next. Only one process owns the
routines at a time. When another process (the desktop app or another daemon) owns them:
  (no flag)     print who owns and exit 75
  --wait        stand by and take over as soon as the owner exits (bounded by --timeout if given)
  --takeover    ask the owner to hand over; the desktop app asks its user, a daemon follows its
                --on-takeover policy. Denied or not approved within --timeout: exit 75.
  --kill-wedged with --takeover: after the timeout, end an owner that is verifiably wedged
                (same user and host, heartbeat stale for 30 s). A busy owner is never killed.

SIGINT, SIGTERM or SIGHUP (the terminal or ssh session closed) stops admitting runs, waits for
runs in flight (up to %s), releases and exits 0; under nohup, SIGHUP is ignored. A SIGINT or
SIGTERM within %s of the first stop signal is the same request. A later one ends the processes
of the runs in flight and exits with 130 (143 for SIGTERM; the next owner records those runs as
interrupted); a further SIGHUP changes nothing.
When this daemon approves a takeover it hands over and exits 0; if the requester has not
taken the routines within 5s, it takes them back at a new epoch and carries on.`, fmtDur(owning.DrainTimeout), fmtDur(sameStopWithin)),
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.timeoutSet = cmd.Flags().Changed("timeout")
			return runDaemon(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.takeover, "takeover", false, "ask the current owner to hand over")
	f.BoolVar(&o.wait, "wait", false, "stand by until the current owner exits, then own")
	f.DurationVar(&o.timeout, "timeout", o.timeout, "how long --takeover (and --wait, if given) may take")
	f.StringVar(&o.onTakeover, "on-takeover", o.onTakeover, "answer to takeover requests: allow or deny")
	f.BoolVar(&o.killWedged, "kill-wedged", false, "with --takeover: end a verifiably wedged owner after --timeout")
	f.DurationVar(&o.heartbeat, "heartbeat", 0, "owner heartbeat interval (default 2s; for tests)")
	_ = f.MarkHidden("heartbeat")
	f.DurationVar(&o.wedgeAfter, "wedge-threshold", 0, "stale heartbeat needed by --kill-wedged (default 30s; for tests)")
	_ = f.MarkHidden("wedge-threshold")
	return cmd
}

// runDaemon owns and serves the routines until ctx ends (exit 0) or a takeover is approved
// (exit 0). Errors: bad flags (2), owned by another process / takeover denied or timed out (75),
// unsafe state directory (77), a config the engine cannot start with (78), anything else (1).
func runDaemon(ctx context.Context, e *env, o daemonOptions) error {
	policy := ownership.Policy(o.onTakeover)
	switch {
	case policy != ownership.PolicyAllow && policy != ownership.PolicyDeny:
		return fmt.Errorf("%w: --on-takeover %q: want allow or deny", errUsage, o.onTakeover)
	case o.takeover && o.wait:
		return fmt.Errorf("%w: --takeover and --wait cannot be combined", errUsage)
	case o.killWedged && !o.takeover:
		return fmt.Errorf("%w: --kill-wedged needs --takeover", errUsage)
	case o.timeout <= 0:
		return fmt.Errorf("%w: --timeout must be positive", errUsage)
	case o.heartbeat < 0 || (o.heartbeat > 0 && o.heartbeat < 50*time.Millisecond):
		return fmt.Errorf("%w: --heartbeat must be at least 50ms", errUsage)
	}

	// A file that cannot be used at all is refused before touching ownership (or creating a
	// profile directory): owning with no routines would only keep the desktop app from running them.
	if _, _, err := e.profileConfig(); err != nil {
		if errors.Is(err, errNoConfig) {
			return fmt.Errorf("%w\nThe daemon did not start", err)
		}
		if errors.Is(err, config.ErrConfig) {
			return fmt.Errorf("%w\nThe daemon did not start: fix the file ('"+progName+" validate' checks it)", err)
		}
		return err
	}
	p, err := e.resolve()
	if err != nil {
		return err
	}
	// So is a journal file that is not one: owning could only refuse every routine.
	if _, err := journal.MaxEpochOf(p.Journal); errors.Is(err, journal.ErrNotJournal) {
		return fmt.Errorf("%w\nThe daemon did not start", err)
	}
	opts := owning.Options(p, ownership.RoleDaemon, Version, policy, e.logger)
	opts.HeartbeatInterval = o.heartbeat
	for {
		h, err := acquireForDaemon(ctx, e, p, opts, o)
		if err != nil {
			if ctx.Err() != nil && !o.takeover {
				fmt.Fprintf(e.stderr, "Stopped%s while standing by.\n", onSignal(ctx))
				return nil
			}
			return err
		}
		why := watchEvents(e, h)
		started := func(eng *scheduler.Engine) func() {
			fmt.Fprintln(e.stderr, startupLine(eng.Routines(), h.Epoch(), p.Config, e.now()))
			return nil
		}
		if err := owning.Serve(ctx, h, p, owning.LogNotifier{Logger: e.logger}, e.logger, owning.Hooks{Started: started}); err != nil {
			return err
		}
		if ctx.Err() != nil {
			fmt.Fprintf(e.stderr, "Stopped%s; the routines are released.\n", onSignal(ctx))
			return nil
		}
		if err := h.Err(); errors.Is(err, ownership.ErrHandoverFailed) {
			// Nobody took the guard after the approval (a forged request, a challenger that hung):
			// own again, at a new epoch, rather than leave the routines unowned. Through the
			// standby path: should another process have taken them meanwhile, this one waits.
			e.logger.Warn("taking the routines back", "err", err)
			fmt.Fprintf(e.stderr, "The %v; taking the routines back.\n", err)
			o.takeover, o.wait, o.timeoutSet = false, true, false
			continue
		}
		switch ev := why(); {
		case ev.Kind == ownership.EventGuardReplaced:
			// Someone deleted or replaced owner.lock: we stopped admitting runs at once; go back
			// to contending through the normal path rather than guess who owns now.
			e.logger.Warn("owner.lock was deleted or replaced; standing by to own again", "err", ev.Err)
			o.takeover, o.wait, o.timeoutSet = false, true, false
			continue
		case ev.Request != nil:
			fmt.Fprintf(e.stderr, "Takeover approved: handed the routines over to the %s (pid %d on %s). Exiting.\n",
				roleName(ev.Request.Requester.Role), ev.Request.Requester.PID, ev.Request.Requester.Host)
		default:
			fmt.Fprintln(e.stderr, "Ownership ended (handed over). Exiting.")
		}
		return nil
	}
}

// acquireForDaemon becomes the owner as o asks: once, by standing by, or by takeover.
func acquireForDaemon(ctx context.Context, e *env, p paths.Paths, opts ownership.Options, o daemonOptions) (*ownership.Handle, error) {
	if o.takeover {
		return takeover(ctx, e, p, opts, o)
	}
	h, err := ownership.Acquire(ctx, opts)
	var owned *ownership.OwnedError
	switch {
	case err == nil:
		return h, nil
	case o.wait && errors.Is(err, ownership.ErrEpochFloorUnavailable):
		fmt.Fprintf(e.stderr, "Standing by: the journal cannot be read yet (%v); owning as soon as it can (Ctrl-C to stop).\n", err)
	case errors.Is(err, ownership.ErrEpochFloorUnavailable):
		return nil, fmt.Errorf("own the routines: %w\n'"+progName+" daemon --wait' keeps trying until the journal can be read", err)
	case !errors.As(err, &owned):
		return nil, fmt.Errorf("own the routines: %w", err)
	case !o.wait:
		return nil, ownedErr(owned, e.now())
	default:
		fmt.Fprintf(e.stderr, "Standing by: %s owns the routines; taking over when it exits (Ctrl-C to stop).\n", describeOwner(owned.Holder, e.now()))
	}
	wctx := ctx
	if o.timeoutSet {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	h, err = ownership.Wait(wctx, opts)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		st, _ := ownership.Inspect(p.State)
		return nil, withCode(ExitTempFail, fmt.Errorf("still owned after waiting %s: %s.\n%s", o.timeout, describeOwner(st.Record, e.now()), ownedHelp(st.Record)))
	}
	return h, err
}

// onSignal is " on SIGHUP" (the signal that ended ctx), or "" when no signal did.
func onSignal(ctx context.Context) string {
	if sig := owning.SignalOf(ctx); sig != nil {
		return " on " + owning.SignalName(sig)
	}
	return ""
}

// ownedErr is the refusal every command prints when another process owns: who (role, pid, host,
// since, epoch — or the pid really holding the guard when owner.json does not say), and what to do.
func ownedErr(owned *ownership.OwnedError, now time.Time) error {
	who := describeOwner(owned.Holder, now)
	if owned.Holder == nil && owned.Status.HolderPID > 0 {
		who = fmt.Sprintf("pid %d (it holds owner.lock, but owner.json does not describe it)", owned.Status.HolderPID)
	}
	if r := owned.Holder; r != nil && r.State == ownership.StateYielding {
		return fmt.Errorf("%w: %s is stopping: %s.\n%s", ownership.ErrOwned, who, drainNote(r), ownedHelp(r))
	}
	return fmt.Errorf("%w: %s.\n%s", ownership.ErrOwned, who, ownedHelp(owned.Holder))
}

// drainNote says what a stopping (yielding) owner r is waiting for.
func drainNote(r *ownership.Record) string {
	if r.InFlight == 0 {
		return "it releases the routines in a moment"
	}
	return fmt.Sprintf("it finishes its %s in flight, then releases the routines", plural(r.InFlight, "run", "runs"))
}

// startupLine is what the daemon prints once it owns and its routines are armed, so a person
// sees at once that it is alive and what comes next: epoch, how many routines (paused, disabled)
// from which file, and the next run with its time.
func startupLine(states []scheduler.RoutineState, epoch uint64, config string, now time.Time) string {
	var paused, disabled int
	var next *scheduler.RoutineState
	for i := range states {
		s := &states[i]
		switch {
		case s.Disabled != "":
			disabled++
		case s.Paused:
			paused++
		case s.Next != nil && (next == nil || s.Next.Before(*next.Next)):
			next = s
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Owning the routines (epoch %d): %s from %s", epoch, plural(len(states), "routine", "routines"), config)
	var notes []string
	if paused > 0 {
		notes = append(notes, fmt.Sprintf("%d paused", paused))
	}
	if disabled > 0 {
		notes = append(notes, fmt.Sprintf("%d disabled, see '"+progName+" validate'", disabled))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
	}
	if next != nil {
		fmt.Fprintf(&b, ". Next run: %s at %s.", next.Name, fmtTime(next.Next, now))
	} else {
		b.WriteString(". Nothing is scheduled: every routine is paused or disabled.")
	}
	b.WriteString(" Ctrl-C stops.")
	return b.String()
}
