package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
)

type routinesOptions struct{ json bool }

// newRoutinesCmd builds `routinely routines`: flags and help; the work is runRoutines's.
func newRoutinesCmd(e *env) *cobra.Command {
	var o routinesOptions
	cmd := &cobra.Command{
		Use:   "routines",
		Short: "List the routines with their schedule, next run, last outcome and pause state",
		Long: `List every routine of routines.toml: schedule, action, next run (or since when it is
overdue), last run and outcome, paused or disabled (with the validation message). Invalid
routines are listed as disabled and their problems printed as file:line:col on stderr.

While routines.toml does not parse (or is missing), the owner keeps running the last good
version: it is listed, the file's error is printed on stderr, and the exit code is 78.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runRoutines(cmd.Context(), e, o) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (shape in the README)")
	return cmd
}

// runRoutines prints the routines; it creates nothing. While routines.toml cannot be used, it
// prints the last good version the owner runs (from the journal) and the file's error on
// stderr, and exits 78 all the same: the file needs fixing. Errors: the state directory (77), a
// routines.toml that is missing, unreadable or does not parse with no last good version (78),
// the journal (1).
func runRoutines(_ context.Context, e *env, o routinesOptions) error {
	p, _, err := e.lookup()
	if err != nil {
		return err
	}
	j, jerr := openJournal(p)
	if j != nil {
		defer j.Close()
	}
	f := routinesInForce(p, j)
	switch {
	case f.cfg == nil:
		return f.loadErr
	case jerr != nil:
		return jerr
	}
	states, err := scheduler.States(f.cfg, j, e.now())
	if err != nil {
		return fmt.Errorf("routine states: %w", err)
	}
	var note string
	if f.broken != nil {
		st, _ := ownership.Inspect(p.State)
		note = fmt.Sprintf("%s has an error at %d:%d — %s", filepath.Base(p.Config), f.broken.Line, f.broken.Col,
			lastGoodNote(f.lastGood, st.Held, e.now()))
	}
	if o.json {
		if err := writeJSON(e.stdout, toJSONRoutines(states)); err != nil {
			return err
		}
	} else {
		if note != "" {
			fmt.Fprintln(e.stdout, note+":")
		}
		printRoutineTable(e.stdout, states, e.now())
		printProblems(e.stderr, f.cfg.Problems)
	}
	if f.broken != nil {
		fmt.Fprintf(e.stderr, "%s\n%s\n", f.loadErr, note)
		return withCode(ExitConfig, nil)
	}
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
		next := fmtTime(s.Next, now)
		if s.IsOverdue(now) {
			next = "OVERDUE since " + fmtTime(s.Overdue, now)
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Schedule, s.Action, next, last, outcome, routineStateWord(s, now))
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
