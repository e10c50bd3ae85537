package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

type pauseOptions struct {
	name  string
	all   bool
	note  string
	until string
}

// newPauseCmd builds `routinely pause`: flags and help; the work is runPause's.
func newPauseCmd(e *env) *cobra.Command {
	var o pauseOptions
	cmd := &cobra.Command{
		Use:   "pause NAME|--all",
		Short: "Pause a routine (or all) until resumed or until a time",
		Long: `Pause NAME, or every routine with --all. The pause is kept in the journal: it survives
restarts and handoffs between the desktop app and the daemon. Slots that fall while paused are
recorded as "skipped (paused)"; resuming does not replay them.

--until takes a duration (2h, 90m) or an RFC 3339 time; the routine resumes by itself then.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.name = args[0]
			}
			return runPause(cmd.Context(), e, o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "pause every routine")
	cmd.Flags().StringVar(&o.note, "note", "", "why, shown in status and the app")
	cmd.Flags().StringVar(&o.until, "until", "", "resume automatically: a duration (2h) or an RFC 3339 time")
	return cmd
}

// runPause records the pause in the journal. Errors: NAME and --all both or neither, a bad
// --until (2), unknown routine (1), missing or broken config or a disabled routine (78), state
// directory (77), journal (1).
func runPause(_ context.Context, e *env, o pauseOptions) error {
	if err := checkNameOrAll(o.name, o.all); err != nil {
		return err
	}
	until, err := parseUntil(o.until, e.now())
	if err != nil {
		return err
	}
	_, j, err := e.requestJournal(o.name)
	if err != nil {
		return err
	}
	defer j.Close()
	if err := j.SetPaused(o.name, o.note, until); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	what := o.name
	if o.all {
		what = "every routine"
	}
	when := "until resumed ('" + progName + " resume " + nameOrAll(o.name) + "')"
	if until != nil {
		when = "until " + fmtTime(until, e.now())
	}
	fmt.Fprintf(e.stdout, "Paused %s %s.\n", what, when)
	return nil
}

// checkNameOrAll enforces exactly one of NAME and --all.
func checkNameOrAll(name string, all bool) error {
	switch {
	case name != "" && all:
		return fmt.Errorf("%w: give a routine NAME or --all, not both", errUsage)
	case name == "" && !all:
		return fmt.Errorf("%w: give a routine NAME or --all", errUsage)
	}
	return nil
}

// nameOrAll is the argument that names the same target again: NAME, or --all when name is "".
func nameOrAll(name string) string {
	if name == "" {
		return "--all"
	}
	return name
}

// parseUntil reads --until: "" → nil, a positive duration from now, or an RFC 3339 time in the
// future. Anything else is a usage error.
func parseUntil(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return nil, fmt.Errorf("%w: --until %s: want a positive duration", errUsage, s)
		}
		t := now.Add(d)
		return &t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("%w: --until %q: want a duration like 2h or a time like 2026-12-01T08:00:00+01:00", errUsage, s)
	}
	if !t.After(now) {
		return nil, fmt.Errorf("%w: --until %s is in the past", errUsage, s)
	}
	return &t, nil
}
