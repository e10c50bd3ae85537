package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/scheduler"
)

type routinesOptions struct{ json bool }

// newRoutinesCmd builds `routinely routines`: flags and help; the work is runRoutines's.
func newRoutinesCmd(e *env) *cobra.Command {
	var o routinesOptions
	cmd := &cobra.Command{
		Use:   "routines",
		Short: "List the routines with their schedule, next run, last outcome and pause state",
		Long: `List every routine of routines.toml: schedule, action, next run, last run and outcome,
paused or disabled (with the validation message). Invalid routines are listed as disabled and
their problems printed as file:line:col on stderr.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runRoutines(cmd.Context(), e, o) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (shape in the README)")
	return cmd
}

// runRoutines prints the routines; it creates nothing. Errors: the state directory (77), a
// routines.toml that is missing, unreadable or does not parse (78), the journal (1).
func runRoutines(_ context.Context, e *env, o routinesOptions) error {
	p, cfg, err := e.profileConfig()
	if err != nil {
		return err
	}
	states, err := routineStates(e, p, cfg)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, toJSONRoutines(states))
	}
	printRoutineTable(e.stdout, states, e.now())
	printProblems(e.stderr, cfg.Problems)
	return nil
}

// printRoutineTable prints one line per routine.
func printRoutineTable(w io.Writer, states []scheduler.RoutineState, now time.Time) {
	if len(states) == 0 {
		fmt.Fprintln(w, "No routines.")
		return
	}
	t := newTable(w)
	fmt.Fprintln(t, "ROUTINE\tSCHEDULE\tACTION\tNEXT\tLAST\tOUTCOME\tSTATE")
	for _, s := range states {
		last, outcome := "-", "-"
		if s.Last != nil {
			last = fmtTime(&s.Last.Slot, now)
			outcome = s.Last.Outcome
			if s.Last.Reason != "" {
				outcome += " (" + s.Last.Reason + ")"
			}
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Schedule, s.Action, fmtTime(s.Next, now), last, outcome, routineStateWord(s, now))
	}
	t.Flush()
}

// routineStateWord summarises pause, disable and running in one word or phrase.
func routineStateWord(s scheduler.RoutineState, now time.Time) string {
	switch {
	case s.Disabled != "":
		return "disabled: " + s.Disabled
	case s.Running:
		return "running"
	case s.Paused:
		word := "paused"
		if s.PauseUntil != nil {
			word += " until " + fmtTime(s.PauseUntil, now)
		}
		if s.PauseNote != "" {
			word += ": " + s.PauseNote
		}
		return word
	default:
		return "active"
	}
}
