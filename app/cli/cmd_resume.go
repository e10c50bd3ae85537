package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type resumeOptions struct {
	name string
	all  bool
}

// newResumeCmd builds `routinely resume`: flags and help; the work is runResume's.
func newResumeCmd(e *env) *cobra.Command {
	var o resumeOptions
	cmd := &cobra.Command{
		Use:   "resume NAME|--all",
		Short: "Resume a paused routine (or all); paused slots are not replayed",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.name = args[0]
			}
			return runResume(cmd.Context(), e, o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "resume every routine")
	return cmd
}

// runResume clears the pause in the journal. Errors as for pause. A routine paused by
// `paused = true` in routines.toml stays paused until the file says otherwise.
func runResume(_ context.Context, e *env, o resumeOptions) error {
	if err := checkNameOrAll(o.name, o.all); err != nil {
		return err
	}
	r, j, err := e.requestJournal(o.name)
	if err != nil {
		return err
	}
	defer j.Close()
	if err := j.Resume(o.name); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	what := o.name
	if o.all {
		what = "every routine"
	}
	if r != nil && r.Paused {
		fmt.Fprintf(e.stdout, "Cleared the pause of %s, but routines.toml says paused = true: it stays paused until you remove that line.\n", what)
		return nil
	}
	fmt.Fprintf(e.stdout, "Resumed %s; the next slot runs as scheduled.\n", what)
	return nil
}
