// The runtime re-reads the CPU affinity and cgroup CPU limit once a second to adjust GOMAXPROCS
// (https://go.dev/doc/godebug#go-125); a background scheduler that mostly sleeps has no use for
// it, and that wake-up was a good part of an idle daemon's CPU.
//
//go:debug updatemaxprocs=0

// Command routinely runs a person's routines in the background, at most once per slot.
// It only parses the command line and wires packages (docs/design.md#1-layout-and-dependency-direction).
package main

import (
	"os"

	"github.com/routinely/routinely/app/cli"
	"github.com/routinely/routinely/app/console"
)

func main() {
	// The desktop app re-executes this binary to host its window (app/desktop/bridge).
	if code, ok := windowProcess(); ok {
		os.Exit(code)
	}
	args := os.Args[1:]
	if !cli.WantsDesktop(args) {
		// A GUI-subsystem Windows build has no console of its own: print where the command was typed.
		console.Attach()
	}
	os.Exit(cli.Execute(args, desktopEntry))
}
