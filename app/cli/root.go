// Package cli is Routinely's command line: it decides what each subcommand prints and which exit
// code it returns. Each subcommand lives in cmd_<name>.go (cobra flags and help, and a testable
// run function); root.go is the command tree and Execute; exitcodes.go maps errors to exit
// codes, once; the other files are shared helpers (profile lookup, formatting, JSON shapes,
// signals, the takeover client).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/routinely/routinely/app/paths"
)

// Version is set at build time with -ldflags "-X .../app/cli.Version=...".
var Version = "dev"

// Execute runs the command line args (without the program name) and returns the process exit
// code (see exitcodes.go). desktop starts the desktop app when no subcommand is given; nil in
// -tags nogui builds. The first SIGINT or SIGTERM cancels the running command's context; a
// second one, more than a second later, ends the runs in flight and exits (signals.go). Call it on the main goroutine: the desktop app needs the
// main thread on macOS (DesktopFunc).
func Execute(args []string, desktop DesktopFunc) int {
	setProgName(os.Args[0])
	// On Windows cobra refuses to run a process that explorer.exe started: it prints "This is a
	// command line tool", waits 5 s and exits 1. Yet explorer.exe is what starts the desktop app
	// there (a double-click, the Start menu, the login item in the Run key), so that check is off.
	cobra.MousetrapHelpText = ""
	ctx, stop := notifySignals(os.Stderr)
	defer stop()
	return execute(ctx, newEnv(os.Stdout, os.Stderr), args, desktop)
}

// execute is Execute with its environment injected, for tests.
func execute(ctx context.Context, e *env, args []string, desktop DesktopFunc) int {
	root := newRoot(e, desktop)
	root.SetArgs(args)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	code := exitCodeFor(err)
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) || ee.err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", errPrefix(), err)
		}
		if code == ExitUsage {
			path := "routinely"
			if cmd != nil {
				path = cmd.CommandPath()
			}
			fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", path)
		}
	}
	return code
}

// newRoot builds the command tree. Global flags: --home, --log-level.
func newRoot(e *env, desktop DesktopFunc) *cobra.Command {
	var background bool
	e.desktopBuilt = desktop != nil
	root := &cobra.Command{
		Use:   "routinely",
		Short: "Run your routines in the background, never twice",
		Long: `Routinely runs your routines (a morning briefing, a page watch, a heartbeat, any command)
and guarantees that a routine never fires twice: one process at a time, the desktop app or
'routinely daemon', owns the schedule; every other instance watches.

With no command, routinely starts the desktop app (tray icon).`,
		Version:       Version,
		Args:          usageArgs(cobra.NoArgs),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return e.setupLogger()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDesktop(cmd.Context(), e, desktop, background)
		},
	}
	root.PersistentFlags().StringVar(&e.home, "home", "", "profile directory holding config, state and journal (env "+paths.EnvHome+")")
	root.PersistentFlags().StringVar(&e.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	root.Flags().BoolVar(&background, "background", false, "start the desktop app with no window (used at login)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %w", errUsage, err)
	})
	root.SetUsageTemplate(root.UsageTemplate() + "\n" + exitCodesHelp + "\n")
	root.AddCommand(
		newDaemonCmd(e), newStatusCmd(e), newRoutinesCmd(e), newPreviewCmd(e), newHistoryCmd(e),
		newRunCmd(e), newPauseCmd(e), newResumeCmd(e), newValidateCmd(e), newPathsCmd(e),
		newVersionCmd(e), newAutostartCmd(e), newDevServeCmd(e), newHubCmd(e),
	)
	return root
}

// usageArgs wraps a cobra argument validator so its errors exit 2.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		return nil
	}
}

// WantsDesktop reports whether args (without the program name) start the desktop app rather
// than a command-line subcommand, help or version; main uses it to attach a console on Windows
// only for commands.
func WantsDesktop(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "--help", "-v", "--version":
			return false
		}
	}
	root := newRoot(newEnv(io.Discard, io.Discard), nil)
	root.InitDefaultHelpCmd() // cobra adds these lazily on Execute
	root.InitDefaultCompletionCmd()
	cmd, _, err := root.Find(args)
	return err == nil && cmd == root
}
