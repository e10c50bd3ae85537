package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
)

type statusOptions struct{ json bool }

// newStatusCmd builds `routinely status`: flags and help; the work is runStatus's.
func newStatusCmd(e *env) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show who owns the routines, whether it is healthy, and each routine's next and last run",
		Long: `Show the owner (role, pid, host, since, epoch, heartbeat age, last tick, last job), every wedge
diagnosis, and per routine its next run, last run and last outcome.

Exits 0 with a healthy owner, 3 with no owner, 4 when an owner holds the routines but looks
unhealthy (not heartbeating, stalled, draining, journal-unwritable, hub-unreachable).

While routines.toml does not parse (or is missing), the routines shown are the last good
version the owner runs, with the file's error ("config_error" and "last_good_config" in
--json); the exit code still says how the owner is (` + "`routines`" + ` exits 78 while the file is broken).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runStatus(cmd.Context(), e, o) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (shape in the README)")
	return cmd
}

// runStatus prints the status and returns an exitError carrying 0, 3 or 4; other errors are
// those of looking the profile up (77) and ownership.Inspect (1). It creates nothing: a profile
// directory that does not exist is "no owner". An unreadable config or journal (one that is not
// a Routinely journal, say) is reported inside the status, not as a failure: who owns still
// matters then.
func runStatus(_ context.Context, e *env, o statusOptions) error {
	p, exists, err := e.lookup()
	if err != nil {
		return err
	}
	st := ownership.Status{ObservedAt: e.now(), Diagnoses: []ownership.Diagnosis{}}
	if exists {
		if st, err = ownership.Inspect(p.State); err != nil {
			return fmt.Errorf("inspect owner: %w", err)
		}
	}
	out := jsonStatus{
		StateDir: p.State, Config: p.Config, Held: st.Held, Alive: st.Alive, HolderPID: st.HolderPID,
		Owner: toJSONOwner(st.Record), Diagnoses: []jsonDiagnosis{}, Routines: []jsonRoutine{},
		Problems: []jsonProblem{}, ObservedAt: st.ObservedAt,
	}
	if st.Record != nil {
		age := ms(st.HeartbeatAge)
		out.HeartbeatAgeMS = &age
	}
	for _, d := range st.Diagnoses {
		out.Diagnoses = append(out.Diagnoses, jsonDiagnosis{Kind: string(d.Kind), Message: d.Message, Since: nonZero(d.Since)})
	}
	if r := st.PendingRequest; r != nil {
		out.Takeover = &jsonTakeover{ID: r.ID, RequesterPID: r.Requester.PID, RequesterHost: r.Requester.Host,
			RequesterRole: string(r.Requester.Role), RequestedAt: r.RequestedAt, ExpiresAt: r.ExpiresAt, Reason: r.Reason}
	}
	switch {
	case !st.Held:
		out.Health, out.ExitCode = "no-owner", ExitNoOwner
	case !st.Healthy():
		out.Health, out.ExitCode = "unhealthy", ExitUnhealthy
	default:
		out.Health, out.ExitCode = "healthy", ExitOK
	}
	var states []scheduler.RoutineState
	j, jerr := openJournal(p)
	if j != nil {
		defer j.Close()
	}
	f := routinesInForce(p, j)
	cfg := f.cfg
	if f.loadErr != nil {
		out.ConfigError = f.loadErr.Error()
	}
	if f.lastGood != nil {
		out.LastGood = &jsonLastGood{AppliedAt: f.lastGood.AppliedAt, Epoch: f.lastGood.Epoch,
			Note: lastGoodNote(f.lastGood, st.Held, e.now())}
	}
	switch {
	case cfg == nil:
	case jerr != nil:
		out.Problems = toJSONProblems(cfg.Problems)
		out.JournalError = jerr.Error()
	default:
		out.Problems = toJSONProblems(cfg.Problems)
		if states, err = scheduler.States(cfg, j, e.now()); err != nil {
			out.JournalError = fmt.Sprintf("routine states: %v", err)
		}
	}
	out.Routines = toJSONRoutines(states)
	var hubDiag *jsonDiagnosis
	if out.Hub, hubDiag = hubStatus(p, cfg, st, e.now()); hubDiag != nil {
		out.Diagnoses = append(out.Diagnoses, *hubDiag)
		if out.ExitCode == ExitOK {
			out.Health, out.ExitCode = "unhealthy", ExitUnhealthy
		}
	}

	if o.json {
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		printStatus(e, st, out, states, cfg, exists)
	}
	return withCode(out.ExitCode, nil)
}

// printStatus is the human form of the status.
func printStatus(e *env, st ownership.Status, out jsonStatus, states []scheduler.RoutineState, cfg *config.Config, exists bool) {
	now := e.now()
	w := e.stdout
	switch {
	case !st.Held:
		fmt.Fprintln(w, "Owner:      none — no routine runs until the desktop app or '"+progName+" daemon' starts")
		if r := st.Record; r != nil {
			fmt.Fprintf(w, "Last owner: %s, state %s\n", describeOwner(r, now), r.State)
		}
	default:
		fmt.Fprintf(w, "Owner:      %s\n", describeOwner(st.Record, now))
		if r := st.Record; r != nil {
			alive := "alive"
			if !st.Alive {
				alive = "NOT the recorded process"
			}
			fmt.Fprintf(w, "Process:    %s, state %s, version %s\n", alive, r.State, r.Version)
			fmt.Fprintf(w, "Heartbeat:  %s ago (every %s)\n", fmtDur(st.HeartbeatAge), fmtDur(msDur(r.HeartbeatIntervalMS)))
			fmt.Fprintf(w, "Last tick:  %s\n", fmtAgo(nonZero(r.LastTickAt), now))
			if j := r.LastJob; j != nil {
				fmt.Fprintf(w, "Last job:   %s, slot %s\n", j.Routine, fmtTime(&j.Slot, now))
			}
		}
		if st.HolderPID > 0 && (st.Record == nil || st.HolderPID != st.Record.PID) {
			fmt.Fprintf(w, "Guard held by pid %d\n", st.HolderPID)
		}
	}
	fmt.Fprintf(w, "Health:     %s\n", out.Health)
	for _, d := range out.Diagnoses {
		fmt.Fprintf(w, "  ! %s: %s\n", d.Kind, d.Message)
	}
	printHub(w, out.Hub, now)
	if r := st.PendingRequest; r != nil {
		fmt.Fprintf(w, "Takeover:   requested by %s pid %d on %s, expires %s\n", r.Requester.Role, r.Requester.PID, r.Requester.Host, fmtTime(&r.ExpiresAt, now))
	}
	if exists {
		fmt.Fprintf(w, "State dir:  %s\n\n", out.StateDir)
	} else {
		fmt.Fprintf(w, "State dir:  %s (does not exist: nothing has run in this profile; check --home)\n\n", out.StateDir)
	}
	if out.ConfigError != "" {
		fmt.Fprintf(w, "Config:     %s\n", out.ConfigError)
		if out.LastGood != nil {
			fmt.Fprintf(w, "            %s\n", out.LastGood.Note)
		}
		fmt.Fprintln(w)
	}
	if out.JournalError != "" {
		// No table: without the journal every routine would look as if it had never run.
		fmt.Fprintf(w, "Journal:    %s\n", out.JournalError)
	} else {
		printRoutineTable(w, states, now)
	}
	if cfg != nil {
		printProblems(e.stderr, cfg.Problems)
	}
}
