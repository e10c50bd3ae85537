package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type pathsOptions struct{ json bool }

// newPathsCmd builds `routinely paths`: flags and help; the work is runPaths's.
func newPathsCmd(e *env) *cobra.Command {
	var o pathsOptions
	cmd := &cobra.Command{
		Use:   "paths",
		Short: "Print where this profile keeps its config, state, journal and logs",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return runPaths(cmd.Context(), e, o) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON: {state, config, journal, logs}")
	return cmd
}

// runPaths prints the profile's paths. It creates nothing (beyond the per-OS default state
// directory, as every command does) and checks the state directory (77 if unsafe).
func runPaths(_ context.Context, e *env, o pathsOptions) error {
	p, exists, err := e.lookup()
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, p)
	}
	t := newTable(e.stdout)
	state := p.State
	if !exists {
		state += " (does not exist yet)"
	}
	fmt.Fprintf(t, "state\t%s\n", state)
	fmt.Fprintf(t, "config\t%s\n", p.Config)
	fmt.Fprintf(t, "journal\t%s\n", p.Journal)
	fmt.Fprintf(t, "logs\t%s\n", p.Logs)
	return t.Flush()
}
