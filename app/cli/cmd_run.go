package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/app/owning"
	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/journal"
)

// pickupTimeout is how long `run` waits for the owner to turn a request into a run; the owner
// polls requests every second, so this only trips for a wedged or departing owner.
var pickupTimeout = 15 * time.Second

type runOptions struct {
	name    string
	here    bool
	noWait  bool
	json    bool
	timeout time.Duration
}

// newRunCmd builds `routinely run`: flags and help; the work is runRun's.
func newRunCmd(e *env) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run NAME",
		Short: "Run a routine now, through the owner, and wait for its outcome",
		Long: `Ask the owner (the desktop app or a daemon) to run NAME now. The request goes through the
journal, so a manual run is never a second firing from a process that does not own the routines;
it has the routine's timeout, overlap policy and history, with trigger "manual".

With no owner, run exits 75 unless --here: then this process becomes the owner for as long as the
run takes (other routines that fall due meanwhile run here too), runs NAME and releases.
Exits 0 when the run succeeds, 1 when it ends in any other outcome.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runRun(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.here, "here", false, "with no owner, own the routines in this process for the run")
	f.BoolVar(&o.noWait, "no-wait", false, "queue the request and exit without waiting for the run")
	f.DurationVar(&o.timeout, "timeout", 0, "give up waiting after this long (0: wait for the run to end)")
	f.BoolVar(&o.json, "json", false, "print the finished run as JSON (the history shape)")
	return cmd
}

// runRun requests a manual run of o.name and waits for it. Errors: unknown routine (1), no owner
// without --here or the owner not picking the request up (75), a run that did not succeed (1),
// missing or broken config or a disabled routine (78), state directory (77).
func runRun(ctx context.Context, e *env, o runOptions) error {
	if o.timeout < 0 {
		return fmt.Errorf("%w: --timeout must not be negative", errUsage)
	}
	if _, _, _, err := e.profileRoutine(o.name); err != nil {
		return err
	}
	p, err := e.resolve()
	if err != nil {
		return err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	st, err := ownership.Inspect(p.State)
	if err != nil {
		return fmt.Errorf("inspect owner: %w", err)
	}
	if !st.Held {
		if !o.here {
			return fmt.Errorf("%w, so nothing would run %q.\nStart the desktop app or '"+progName+" daemon', or run it in this process with '"+progName+" run --here %s'",
				errNoOwner, o.name, o.name)
		}
		return runHere(ctx, e, p, o)
	}
	if o.here {
		fmt.Fprintf(e.stderr, "%s owns the routines; sending the run to it instead of running here.\n", describeOwner(st.Record, e.now()))
	}
	return requestAndWait(ctx, e, p, o, st.Record)
}

// requestAndWait records the run-now request and, unless --no-wait, follows it to its outcome.
func requestAndWait(ctx context.Context, e *env, p paths.Paths, o runOptions, owner *ownership.Record) error {
	j, err := openJournalCreate(p)
	if err != nil {
		return err
	}
	defer j.Close()
	reqID, err := j.RequestRun(o.name)
	if err != nil {
		return fmt.Errorf("request run of %s: %w", o.name, err)
	}
	if o.noWait {
		fmt.Fprintf(e.stdout, "Queued run of %s (request %d); '"+progName+" history %s' shows it.\n", o.name, reqID, o.name)
		return nil
	}
	run, err := waitForRun(ctx, e, p, j, reqID, o.name, owner)
	if err != nil {
		return err
	}
	return reportRun(e, run, o.json)
}

// waitForRun polls the journal every 200 ms until request reqID has become a run that finished,
// showing progress on stderr. Errors (the request stays queued in each case): errNoOwner (75) when
// the owner went away before starting it, an exitError 75 when a live owner has not picked it up
// within pickupTimeout or ctx ended (--timeout, Ctrl-C), the journal's (1).
func waitForRun(ctx context.Context, e *env, p paths.Paths, j *journal.Journal, reqID int64, name string, owner *ownership.Record) (*journal.Run, error) {
	who := "the owner"
	switch {
	case owner != nil && owner.PID == os.Getpid(): // run --here
		who = "this process"
	case owner != nil:
		who = fmt.Sprintf("the %s (pid %d)", roleName(owner.Role), owner.PID)
	}
	prog := startProgress(ctx, e.rawStderr)
	defer prog.Stop()
	if who == "this process" {
		prog.Set(fmt.Sprintf("starting %s…", name))
	} else {
		prog.Set(fmt.Sprintf("asking %s to run %s…", who, name))
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	asked := time.Now()
	var runID int64
	for {
		select {
		case <-ctx.Done():
			if runID == 0 {
				return nil, withCode(ExitTempFail, fmt.Errorf("stopped waiting for %s to start %s; the request stays queued and the owner runs it when it picks it up", who, name))
			}
			return nil, withCode(ExitTempFail, fmt.Errorf("stopped waiting; run %d of %s continues in the owner ('"+progName+" history --output %d' later)", runID, name, runID))
		case <-tick.C:
		}
		if runID == 0 {
			id, err := j.RequestResult(reqID)
			if err != nil {
				return nil, fmt.Errorf("run request %d: %w", reqID, err)
			}
			if id == 0 {
				if time.Since(asked) > pickupTimeout {
					st, _ := ownership.Inspect(p.State)
					if !st.Held {
						return nil, fmt.Errorf("%w: %s went away before starting %s; the request stays queued for the next owner", errNoOwner, who, name)
					}
					return nil, withCode(ExitTempFail, fmt.Errorf("%s has not picked up the request in %s; '"+progName+" status' shows its health (the request stays queued)", who, pickupTimeout))
				}
				continue
			}
			runID = id
			prog.Set(fmt.Sprintf("running %s (run %d) in %s…", name, runID, who))
		}
		run, err := j.Run(runID)
		switch {
		case errors.Is(err, journal.ErrNoRun): // claimed but not visible yet: look again
		case err != nil:
			return nil, err
		case run.Outcome != journal.OutcomeRunning:
			return &run, nil
		}
	}
}

// reportRun prints a finished run; errRunFailed (exit 1) unless it succeeded.
func reportRun(e *env, r *journal.Run, asJSON bool) error {
	if asJSON {
		if err := writeJSON(e.stdout, toJSONRun(r)); err != nil {
			return err
		}
	} else {
		exit := ""
		if r.ExitCode != nil {
			exit = fmt.Sprintf(", exit %d", *r.ExitCode)
		}
		outcome := r.Outcome
		if r.Reason != "" {
			outcome += " (" + r.Reason + ")"
		}
		output := " No output."
		if r.OutputSize > 0 {
			output = fmt.Sprintf(" Output: "+progName+" history --output %d", r.ID)
		}
		fmt.Fprintf(e.stdout, "%s: %s in %s (run %d%s, epoch %d).%s\n",
			r.Routine, outcome, fmtDur(r.Duration), r.ID, exit, r.Epoch, output)
	}
	if r.Outcome != journal.OutcomeSuccess && r.Outcome != journal.OutcomeChanged {
		return withCode(ExitError, fmt.Errorf("%w: %s ended with outcome %s; '"+progName+" history --output %d' shows its output", errRunFailed, r.Routine, r.Outcome, r.ID))
	}
	return nil
}

// runHere owns the routines in this process just long enough to run o.name through the engine,
// then releases. Another process winning the race → ownership.ErrOwned (75).
func runHere(ctx context.Context, e *env, p paths.Paths, o runOptions) error {
	opts := owning.Options(p, ownership.RoleDaemon, Version, ownership.PolicyAllow, e.logger)
	h, err := ownership.Acquire(ctx, opts)
	if err != nil {
		var owned *ownership.OwnedError
		if errors.As(err, &owned) {
			return ownedErr(owned, e.now())
		}
		return fmt.Errorf("own the routines: %w", err)
	}
	fmt.Fprintf(e.stderr, "No owner: running %s in this process (epoch %d); releasing when it ends.\n", o.name, h.Epoch())
	watchEvents(e, h) // log takeover requests and guard problems while we own
	serveCtx, stopServe := context.WithCancel(context.WithoutCancel(ctx))
	started := make(chan struct{})
	var startedOnce sync.Once // Serve starts the engine again after putting a deleted journal back
	served := make(chan error, 1)
	go func() {
		served <- owning.Serve(serveCtx, h, p, owning.LogNotifier{Logger: e.logger}, e.logger,
			owning.Hooks{Started: func(*scheduler.Engine) func() { startedOnce.Do(func() { close(started) }); return nil }})
	}()
	select {
	case err := <-served:
		stopServe()
		return err
	case <-started:
	}
	self := h.Record()
	runErr := requestAndWait(ctx, e, p, o, &self)
	stopServe() // drains in-flight runs and releases
	if err := <-served; err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}
