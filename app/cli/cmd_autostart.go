package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/app/autostart"
)

type autostartOptions struct {
	action string // enable | disable | status
	json   bool
}

// newAutostartCmd builds `routinely autostart`: flags and help; the work is runAutostart's.
func newAutostartCmd(e *env) *cobra.Command {
	var o autostartOptions
	cmd := &cobra.Command{
		Use:       "autostart enable|disable|status",
		Short:     "Start the desktop app at login (XDG autostart, LaunchAgent, Run key)",
		Long:      "Install, remove or show the login item that starts this binary's desktop app in the background.\nIdempotent; enable rewrites the entry to follow this binary's current path.",
		ValidArgs: []string{"enable", "disable", "status"},
		Args:      usageArgs(cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.action = args[0]
			return runAutostart(cmd.Context(), e, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON: {state, location, target, points_here}")
	return cmd
}

// runAutostart performs o.action on the login item. Errors are autostart's, wrapped (1; 77 when
// the entry's location is not writable).
func runAutostart(_ context.Context, e *env, o autostartOptions) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	var st autostart.Status
	switch o.action {
	case "enable":
		st, err = autostart.Enable(exe)
	case "disable":
		st, err = autostart.Disable()
	default:
		st, err = autostart.Current(exe)
	}
	if err != nil {
		return fmt.Errorf("autostart %s: %w", o.action, err)
	}
	if o.json {
		return writeJSON(e.stdout, st)
	}
	fmt.Fprintf(e.stdout, "Start at login: %s\n", st.State)
	if st.Location != "" {
		fmt.Fprintf(e.stdout, "Entry:  %s\n", st.Location)
	}
	if st.Target != "" {
		here := ""
		if !st.PointsHere {
			here = " (not this binary: '" + progName + " autostart enable' points it here)"
		}
		fmt.Fprintf(e.stdout, "Starts: %s --background%s\n", st.Target, here)
	}
	if o.action == "enable" && !e.desktopBuilt {
		fmt.Fprintln(e.stderr, "Note: this binary has no desktop app (-tags nogui); at login it will only explain that.")
	}
	return nil
}
