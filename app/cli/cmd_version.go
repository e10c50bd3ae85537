package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

type versionOptions struct{ json bool }

// newVersionCmd builds `routinely version`: flags and help; the work is runVersion's.
func newVersionCmd(e *env) *cobra.Command {
	var o versionOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, Go version and platform",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return runVersion(cmd.Context(), e, o) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON: {version, go, os, arch}")
	return cmd
}

// runVersion prints the build's version; it only fails if stdout cannot be written.
func runVersion(_ context.Context, e *env, o versionOptions) error {
	v := struct {
		Version string `json:"version"`
		Go      string `json:"go"`
		OS      string `json:"os"`
		Arch    string `json:"arch"`
	}{Version, runtime.Version(), runtime.GOOS, runtime.GOARCH}
	if o.json {
		return writeJSON(e.stdout, v)
	}
	_, err := fmt.Fprintf(e.stdout, "routinely %s (%s, %s/%s)\n", v.Version, v.Go, v.OS, v.Arch)
	return err
}
