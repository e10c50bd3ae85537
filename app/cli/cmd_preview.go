package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/scheduler"
)

type previewOptions struct {
	name  string
	from  string
	count int
	json  bool
}

// newPreviewCmd builds `routinely preview`: flags and help; the work is runPreview's.
func newPreviewCmd(e *env) *cobra.Command {
	o := previewOptions{count: 10}
	cmd := &cobra.Command{
		Use:   "preview NAME",
		Short: "Show the next slots of a routine, computed by the scheduler's own code",
		Long: `Show when NAME will run next: the slots strictly after --from (default now), in the
routine's time zone, computed by the same code that arms the timers (so daylight-saving
changes look exactly as they will run). An "every" routine's slots follow the grid its owner
armed (recorded in the journal); before any owner armed it, the grid starts at --from.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runPreview(cmd.Context(), e, o)
		},
	}
	cmd.Flags().StringVar(&o.from, "from", "", "start time, RFC 3339 (default now)")
	cmd.Flags().IntVar(&o.count, "count", o.count, "number of slots (1–1000)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (shape in the README)")
	return cmd
}

// runPreview prints the next o.count slots of o.name, as the owner runs them (an `every` grid
// from the anchor in the journal). Errors: bad --from/--count (2), unknown routine (1),
// missing/broken config or a disabled routine (78), state directory (77), an unreadable journal
// (1).
func runPreview(_ context.Context, e *env, o previewOptions) error {
	if o.count < 1 || o.count > 1000 {
		return fmt.Errorf("%w: --count %d: want 1 to 1000", errUsage, o.count)
	}
	from := e.now()
	if o.from != "" {
		t, err := time.Parse(time.RFC3339, o.from)
		if err != nil {
			return fmt.Errorf("%w: --from %q: want RFC 3339 like 2026-03-29T01:30:00+01:00", errUsage, o.from)
		}
		from = t
	}
	p, _, r, err := e.profileRoutine(o.name)
	if err != nil {
		return err
	}
	// The owner's `every` grid is anchored where it armed the routine, and the anchor is in the
	// journal (read-only: looking never writes it; no journal yet means nothing armed it).
	j, err := openJournal(p)
	if err != nil {
		return err
	}
	if j != nil {
		defer j.Close()
	}
	slots, err := scheduler.PreviewArmed(j, r, from, o.count)
	if err != nil {
		return fmt.Errorf("preview %s: %w", o.name, err)
	}
	if o.json {
		if slots == nil {
			slots = []time.Time{}
		}
		return writeJSON(e.stdout, jsonPreview{Routine: o.name, From: from, Slots: slots})
	}
	if len(slots) == 0 {
		fmt.Fprintf(e.stdout, "%s has no slots after %s.\n", o.name, from.Format(time.RFC3339))
		return nil
	}
	for _, s := range slots {
		fmt.Fprintf(e.stdout, "%s  %s\n", s.Format("Mon 2006-01-02 15:04:05 MST"), s.Format(time.RFC3339))
	}
	return nil
}
