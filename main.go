// Command routinely runs a person's routines in the background, at most once per slot.
// It only parses the command line and wires packages (DESIGN.md §1).
package main

import (
	"os"

	"github.com/routinely/routinely/app/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], desktopEntry))
}
