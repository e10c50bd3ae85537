// Package proctest starts the processes of multi-process tests, riding out the one start failure
// Wine makes of its own accord.
//
// Under Wine, CreateProcess now and then fails with ERROR_INTERNAL_ERROR ("Internal error."):
// Wine's NtCreateUserProcess returns STATUS_INTERNAL_ERROR when the new process ended before its
// start-up was done and left no exit code (dlls/ntdll/unix/process.c in
// https://gitlab.winehq.org/wine/wine). No program of ours has run by then, so the start is tried
// again; on real Windows the error does not come from a healthy system, and it is retried the
// same way at no cost.
package proctest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// errorInternalError is ERROR_INTERNAL_ERROR (winerror.h); a syscall.Errno on Windows.
const errorInternalError = syscall.Errno(1359)

// tries is how many times a start is tried in all.
const tries = 3

// Logger is where a retry is told: a testing.TB, or Stderr in a helper process (a copy of the
// test binary), which has none.
type Logger interface {
	Logf(format string, args ...any)
}

// Stderr is a Logger that writes a line to standard error.
var Stderr Logger = stderr{}

type stderr struct{}

func (stderr) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// Start calls build for a command and starts it. If the start fails with Wine's transient
// ERROR_INTERNAL_ERROR (Windows only), it logs that on log, waits 100 ms and calls build again
// for a fresh command (an exec.Cmd cannot be started twice, and a failed start closes the pipes
// it made), up to 3 tries in all. build must set up everything the command needs, pipes
// included, each time it is called.
//
// It returns the started command, or the last start's error: any other error at once, and
// ERROR_INTERNAL_ERROR after the third try.
func Start(log Logger, build func() *exec.Cmd) (*exec.Cmd, error) {
	if h, ok := log.(interface{ Helper() }); ok {
		h.Helper()
	}
	for try := 1; ; try++ {
		cmd := build()
		err := cmd.Start()
		if err == nil || !transient(err) || try == tries {
			return cmd, err
		}
		log.Logf("%v (Wine's transient process-creation failure): try %d of %d in 100 ms", err, try+1, tries)
		time.Sleep(100 * time.Millisecond)
	}
}

// StartCmd is Start for a command that is all exported fields: the first try starts cmd itself,
// a retry a copy of its Path, Args, Env, Dir, standard streams, ExtraFiles, SysProcAttr and
// WaitDelay. cmd must not have pipes from StdinPipe, StdoutPipe or StderrPipe (use Start for
// those). A command from exec.CommandContext (Cancel set) is started once, never retried: a copy
// could not carry its context. It returns the started command, which the caller must use from
// then on, and Start's errors.
func StartCmd(tb testing.TB, cmd *exec.Cmd) (*exec.Cmd, error) {
	tb.Helper()
	if cmd.Cancel != nil {
		return cmd, cmd.Start()
	}
	next := cmd
	return Start(tb, func() *exec.Cmd {
		c := next
		next = &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
			Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles,
			SysProcAttr: cmd.SysProcAttr, WaitDelay: cmd.WaitDelay}
		return c
	})
}

// transient reports whether err is the start failure Start retries.
func transient(err error) bool {
	return runtime.GOOS == "windows" && errors.Is(err, errorInternalError)
}
