// Package console connects a GUI-subsystem Windows binary to the terminal it was started from.
package console

// Attach makes os.Stdout, os.Stderr and os.Stdin use the parent process's console when there is
// one, so `routinely status` prints in the terminal it was typed in even though routinely.exe is
// linked with -H windowsgui (no console of its own). It reports whether a console was attached.
// Call it first thing in main, only for command-line subcommands. On other systems the standard
// streams are already the terminal's and it does nothing (false).
func Attach() bool { return attach() }
