package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type validateOptions struct {
	file string
	json bool
}

// newValidateCmd builds `routinely validate`: flags and help; the work is runValidate's.
func newValidateCmd(e *env) *cobra.Command {
	var o validateOptions
	cmd := &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Check a routines.toml (default: the profile's) and print problems as file:line:col",
		Long: `Check a routines file without running anything. Every problem is printed as
FILE:LINE:COL: message. Exits 0 when every routine is valid, 78 otherwise.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.file = args[0]
			}
			return runValidate(cmd.Context(), e, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (shape in the README)")
	return cmd
}

// runValidate checks o.file (or the profile's routines.toml) and creates nothing. It returns an
// exitError with 78 when the file is missing, does not parse or has an invalid routine, 77/1 when
// the profile cannot be used.
func runValidate(_ context.Context, e *env, o validateOptions) error {
	file := o.file
	if file == "" {
		p, _, err := e.lookup()
		if err != nil {
			return err
		}
		file = p.Config
	}
	out := jsonValidate{File: file, Routines: []string{}, Problems: []jsonProblem{}}
	cfg, err := loadConfig(file, o.file == "")
	if err != nil {
		if !o.json {
			return err // the error text starts with FILE:LINE:COL (config.ErrConfig → 78)
		}
		out.Error = err.Error()
		if werr := writeJSON(e.stdout, out); werr != nil {
			return werr
		}
		return withCode(exitCodeFor(err), nil)
	}
	for _, r := range cfg.Routines {
		out.Routines = append(out.Routines, r.Name)
	}
	out.Problems = toJSONProblems(cfg.Problems)
	out.OK = len(cfg.Problems) == 0
	printed := len(problemLines(cfg.Problems))
	if o.json {
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		printProblems(e.stderr, cfg.Problems)
		if out.OK {
			fmt.Fprintf(e.stdout, "%s: %d routines, all valid\n", file, len(cfg.Routines))
		}
	}
	if !out.OK {
		runs := "no routine can run"
		if n := len(cfg.Routines); n > 0 {
			runs = "the other " + plural(n, "routine runs", "routines run")
		}
		return withCode(ExitConfig, fmt.Errorf("%s: %s; %s", file, plural(printed, "problem", "problems"), runs))
	}
	return nil
}
