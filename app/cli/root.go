// Package cli is Routinely's command line: one file per subcommand, each with a testable run
// function, and the exit codes they share.
package cli

import "fmt"

// Version is set at build time with -ldflags "-X .../app/cli.Version=...".
var Version = "dev"

// Execute runs the command line args and returns the process exit code.
func Execute(args []string, desktop DesktopFunc) int {
	fmt.Println("routinely", Version)
	return 0
}
