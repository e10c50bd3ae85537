//go:build !windows

package cli

import (
	"context"
	"os"
	"syscall"
)

// execHub replaces this process by prog with args (execve(2)): the hub keeps this pid, so a
// SIGTERM from systemd or a SIGKILL reaches the server, and nothing is left waiting for it.
// Errors: execve's, wrapped (the process goes on only when it failed).
func execHub(_ context.Context, _ *env, prog string, args []string) error {
	err := syscall.Exec(prog, append([]string{prog}, args...), os.Environ())
	return hubExitError(prog, err)
}
