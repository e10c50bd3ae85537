package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// commandAction is `run = [argv]` (no shell) and `shell = "..."` (argv is the shell's).
type commandAction struct {
	argv    []string
	cmdLine string // Windows only: the raw command line for cmd.exe, which has its own quoting
	grace   time.Duration
}

// Run starts the command with env os.Environ()+in.Env in in.Dir (a leading ~ is the user's
// home), stdin from the null device, stdout and stderr combined into Output (first MaxOutput
// bytes, with a truncation note). The child leads its own process group (a Job Object on
// Windows) so that ending it ends everything it started; in.OnStart (if set) gets its pid.
//
// When ctx or in.Timeout ends first, the whole group gets SIGTERM, then SIGKILL once the grace
// (Deps.KillGrace, default 5 s) has passed with any member left; the outcome is OutcomeTimeout
// for a deadline and OutcomeInterrupted for a cancellation (shutdown, replace). Otherwise: exit 0
// is OutcomeSuccess, any other exit or death by signal OutcomeFailed, and a program that cannot
// be started (not found, not executable, bad directory) OutcomeCrashed. ExitCode is set whenever
// the process exited normally.
//
// When the command exits but a background process it left keeps the output open, Run stops
// reading after the grace and notes it in Output; it does not kill that process.
func (c *commandAction) Run(ctx context.Context, in Input) Result {
	ctx, cancel := withBudget(ctx, in.Timeout)
	defer cancel()

	dir, err := expandHome(in.Dir)
	if err != nil {
		return crashed(err)
	}
	out := newCappedBuffer(MaxOutput)
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), in.Env...)
	cmd.Stdout, cmd.Stderr = out, out // same writer: exec copies both through one goroutine
	tree := newProcTree(cmd, c.cmdLine)

	// exec calls Cancel on its own goroutine, but Wait returns only after that goroutine has
	// reported back, so cancelledAt needs no lock.
	var cancelledAt time.Time
	cmd.Cancel = func() error {
		cancelledAt = time.Now()
		return tree.terminate(cmd.Process)
	}
	// After a cancel, or after the child exits while a grandchild still holds the output pipe,
	// exec waits this long before killing the leader and closing the pipes.
	cmd.WaitDelay = c.grace

	if err := cmd.Start(); err != nil {
		return crashed(fmt.Errorf("could not start %s: %w", c.argv[0], err))
	}
	tree.attach(cmd.Process)
	defer tree.close()
	if in.OnStart != nil {
		in.OnStart(cmd.Process.Pid)
	}
	waitErr := cmd.Wait()

	if !cancelledAt.IsZero() {
		tree.reap(cancelledAt.Add(c.grace))
	}
	return commandResult(ctx, cmd, waitErr, out, !cancelledAt.IsZero())
}

// commandResult classifies a finished command. ctx is read only when cancelled (it is done).
func commandResult(ctx context.Context, cmd *exec.Cmd, waitErr error, out *cappedBuffer, cancelled bool) Result {
	res := Result{}
	if ps := cmd.ProcessState; ps != nil && ps.ExitCode() >= 0 {
		code := ps.ExitCode()
		res.ExitCode = &code
	}
	switch {
	case cancelled && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Outcome, res.Summary = OutcomeTimeout, "timed out; process group terminated"
	case cancelled:
		res.Outcome, res.Summary = OutcomeInterrupted, "cancelled; process group terminated"
	case waitErr == nil:
		res.Outcome, res.Summary = OutcomeSuccess, "exit status 0"
	case errors.Is(waitErr, exec.ErrWaitDelay):
		// The child exited 0 but something it started kept the output pipe open.
		res.Outcome, res.Summary = OutcomeSuccess, "exit status 0"
		_, _ = out.Write([]byte("\n[stopped reading output: a background process kept it open]\n"))
	default:
		var exitErr *exec.ExitError
		if errors.As(waitErr, &exitErr) {
			res.Outcome, res.Summary = OutcomeFailed, exitErr.ProcessState.String() // "exit status 3", "signal: killed"
		} else {
			res.Outcome, res.Summary = OutcomeFailed, waitErr.Error()
		}
	}
	res.Output = out.Bytes()
	return res
}

func crashed(err error) Result {
	return Result{Outcome: OutcomeCrashed, Summary: err.Error(), Output: []byte(err.Error() + "\n")}
}

// expandHome replaces a leading "~" or "~/" (also "~\" on Windows) in dir with the user's home
// directory. Errors when the home directory is unknown.
func expandHome(dir string) (string, error) {
	if dir != "~" && !strings.HasPrefix(dir, "~/") && !strings.HasPrefix(dir, "~"+string(filepath.Separator)) {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("working directory %q: %w", dir, err)
	}
	return filepath.Join(home, dir[1:]), nil
}
