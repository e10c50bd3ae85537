//go:build windows

package cli

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// execHub runs prog with args as a child sharing this console (Windows has no execve): Ctrl-C
// reaches both, and the child is ended when ctx ends (SIGINT here) and has not stopped within
// 10 s. It returns routinely-hub's exit code as this command's (hubExitError).
func execHub(ctx context.Context, _ *env, prog string, args []string) error {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Cancel = func() error { return nil } // Ctrl-C already reached it; WaitDelay ends it if not
	cmd.WaitDelay = 10 * time.Second
	return hubExitError(prog, cmd.Run())
}
