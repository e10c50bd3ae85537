package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
	"github.com/spf13/cobra"
)

type historyOptions struct {
	routine string
	limit   int
	output  int64
	raw     bool
	json    bool
}

// newHistoryCmd builds `routinely history`: flags and help; the work is runHistory's.
func newHistoryCmd(e *env) *cobra.Command {
	o := historyOptions{limit: 20}
	cmd := &cobra.Command{
		Use:   "history [NAME]",
		Short: "Show past runs (slot, start, late-by, duration, outcome, exit code, epoch, trigger)",
		Long: `Show the newest runs first, of one routine or all. Every slot the scheduler handled is
there: runs, skipped slots (paused, overlap), missed slots outside the catch-up window or while
the journal could not be written ("journal unavailable from … to …", recorded once it can), and
runs interrupted by a crashed owner. --output RUN_ID prints one run's captured output, with
every control character but newline and tab shown as an escape (\u001b for ESC): a watched page
or a command's output cannot drive your terminal. --raw prints its bytes exactly.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.routine = args[0]
			}
			return runHistory(cmd.Context(), e, o)
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", o.limit, "number of runs to show")
	cmd.Flags().Int64Var(&o.output, "output", 0, "print the captured output of run `RUN_ID`")
	cmd.Flags().BoolVar(&o.raw, "raw", false, "with --output: print the output's bytes exactly, control characters included")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (shape in the README)")
	return cmd
}

// runHistory prints the journal's runs, or one run's output (its bytes with --raw, else
// escaped as everything the CLI prints). Errors: bad --limit or --output, or --raw without
// --output (2), unknown run id or routine (1), journal unreadable (1), state directory (77). It
// creates nothing.
func runHistory(_ context.Context, e *env, o historyOptions) error {
	if o.limit < 1 {
		return fmt.Errorf("%w: --limit %d: want at least 1", errUsage, o.limit)
	}
	if o.output < 0 {
		return fmt.Errorf("%w: --output %d: want a run id from '"+progName+" history'", errUsage, o.output)
	}
	if o.raw && o.output == 0 {
		return fmt.Errorf("%w: --raw goes with --output RUN_ID (it prints that run's output exactly)", errUsage)
	}
	p, _, err := e.lookup()
	if err != nil {
		return err
	}
	j, err := openJournal(p)
	if err != nil {
		return err
	}
	if j == nil {
		if o.output != 0 {
			return fmt.Errorf("run %d: %w (the journal is empty)", o.output, journal.ErrNoRun)
		}
		if o.json {
			return writeJSON(e.stdout, []jsonRun{})
		}
		fmt.Fprintln(e.stdout, "No runs yet: nothing has owned this profile.")
		return nil
	}
	defer j.Close()
	if o.output != 0 {
		out, err := j.Output(o.output)
		if err != nil {
			if errors.Is(err, journal.ErrNoRun) {
				return fmt.Errorf("%w; '"+progName+" history' lists run ids", err)
			}
			return err
		}
		if len(out) == 0 {
			// Said on stderr: stdout stays exactly the output, which is empty.
			fmt.Fprintf(e.stderr, "run %d printed nothing.\n", o.output)
			return nil
		}
		w := e.stdout // escaped: see env
		if o.raw {
			w = e.rawStdout
		}
		_, err = w.Write(out)
		return err
	}
	runs, err := j.History(o.routine, o.limit)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if len(runs) == 0 && o.routine != "" {
		// A routine removed from routines.toml keeps its history; only a name that is in neither
		// is a mistake worth an error.
		if _, cfg, err := e.profileConfig(); err == nil {
			if _, err := findRoutine(cfg, o.routine); errors.Is(err, config.ErrUnknownRoutine) {
				return err
			}
		}
	}
	if o.json {
		out := make([]*jsonRun, 0, len(runs))
		for i := range runs {
			out = append(out, toJSONRun(&runs[i]))
		}
		return writeJSON(e.stdout, out)
	}
	if len(runs) == 0 {
		fmt.Fprintln(e.stdout, "No runs yet.")
		return nil
	}
	now := e.now()
	t := newTable(e.stdout)
	// With a hub, a DEVICE column says which device claimed each slot; without one the table
	// stays as it is.
	devices := slices.ContainsFunc(runs, func(r journal.Run) bool { return r.Device != "" })
	header := "RUN\tROUTINE\tSLOT\tSTARTED\tLATE BY\tDURATION\tOUTCOME\tEXIT\tEPOCH\tTRIGGER"
	if devices {
		header += "\tDEVICE"
	}
	fmt.Fprintln(t, header)
	for _, r := range runs {
		exit := "-"
		if r.ExitCode != nil {
			exit = strconv.Itoa(*r.ExitCode)
		}
		outcome := r.Outcome
		if r.Reason != "" {
			outcome += " (" + r.Reason + ")"
		}
		if r.Attempts > 1 {
			outcome += fmt.Sprintf(" after %d attempts", r.Attempts)
		}
		fmt.Fprintf(t, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s", r.ID, r.Routine, fmtTime(&r.Slot, now),
			fmtTime(r.Started, now), fmtDur(r.LateBy), fmtDur(r.Duration), outcome, exit, r.Epoch, r.Trigger)
		if devices {
			fmt.Fprintf(t, "\t%s", r.Device)
		}
		fmt.Fprintln(t)
	}
	return t.Flush()
}
