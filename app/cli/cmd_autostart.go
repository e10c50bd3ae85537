package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/app/autostart"
	"github.com/routinely/routinely/app/paths"
)

type autostartOptions struct {
	action string // enable | disable | status
	json   bool
}

// newAutostartCmd builds `routinely autostart`: flags and help; the work is runAutostart's.
func newAutostartCmd(e *env) *cobra.Command {
	var o autostartOptions
	cmd := &cobra.Command{
		Use:   "autostart enable|disable|status",
		Short: "Start the desktop app at login (XDG autostart, LaunchAgent, Run key)",
		Long: "Install, remove or show the login item that starts this binary's desktop app in the background.\n" +
			"Idempotent; enable rewrites the entry to follow this binary's current path. With --home (or " +
			paths.EnvHome + ") the entry starts that profile.\nA binary built without the desktop app (-tags nogui) refuses enable: " +
			"run the daemon at login instead (its systemd user unit on Linux).",
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

// runAutostart performs o.action on the login item, for the profile chosen with --home or
// ROUTINELY_HOME (the entry then passes --home). A nogui binary refuses enable with exit 2 and
// says what to use instead: at login it could only explain that it has no desktop app. Other
// errors are autostart's or the profile's, wrapped (1; 77 when a location is not writable or the
// profile's directory is unsafe).
func runAutostart(_ context.Context, e *env, o autostartOptions) error {
	if o.action == "enable" && !e.desktopBuilt {
		fmt.Fprint(e.stderr, noDesktopAutostart(runtime.GOOS))
		return withCode(ExitUsage, nil)
	}
	p, _, err := e.lookup()
	if err != nil {
		return err
	}
	m := autostart.Manager{}.WithHome(p.Home)
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
		st, err = m.Enable(exe)
	case "disable":
		st, err = m.Disable()
	default:
		st, err = m.Current(exe)
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
		starts := st.Target + " " + autostart.BackgroundFlag
		if st.Home != "" {
			starts += " " + autostart.HomeFlag + " " + st.Home
		}
		fmt.Fprintf(e.stdout, "Starts: %s\n", starts)
	}
	enable := ""
	if e.desktopBuilt {
		enable = progName
		if p.Home != "" {
			enable += " " + autostart.HomeFlag + " " + p.Home
		}
		enable += " autostart enable"
	}
	if hint := st.Hint(enable); hint != "" {
		fmt.Fprintln(e.stdout, hint)
	}
	return nil
}

// noDesktopAutostart is what a nogui binary says to `autostart enable` on goos: the headless
// alternative is the daemon's systemd user unit where there is systemd, else the system's own
// way of starting a program at login.
func noDesktopAutostart(goos string) string {
	headless := `  - To run your routines headless at login, install the daemon's systemd user unit:
      cp packaging/systemd/routinely-daemon.service ~/.config/systemd/user/
      systemctl --user daemon-reload && systemctl --user enable --now routinely-daemon
`
	switch goos {
	case "windows":
		headless = "  - To run your routines headless at login, have Task Scheduler start 'routinely daemon --wait'\n" +
			"    at log on (Create Task → Triggers: At log on).\n"
	case "darwin":
		headless = "  - To run your routines headless at login, start 'routinely daemon --wait' from a LaunchAgent\n" +
			"    of your own (~/Library/LaunchAgents; see launchd.plist(5)).\n"
	}
	return `This routinely binary was built without the desktop app (-tags nogui), so a login item
could not start anything useful: it would only explain that and exit. Nothing was changed.
  - For the tray app at login, run 'autostart enable' with the desktop build ('make build'
    builds build/routinely; release packages install it as routinely).
` + headless
}
