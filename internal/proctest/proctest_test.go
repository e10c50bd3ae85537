package proctest

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// A start that fails with ERROR_INTERNAL_ERROR is tried three times on Windows (under Wine in
// make test-windows) and once elsewhere; any other failure once; a good start once. exec.Cmd's
// Err field makes Start return that error without creating a process.
func TestStartRetriesOnlyWinesTransientFailure(t *testing.T) {
	internal := &fs.PathError{Op: "fork/exec", Path: "x.exe", Err: errorInternalError}
	other := &fs.PathError{Op: "fork/exec", Path: "x.exe", Err: fs.ErrNotExist}
	wantInternal := 1
	if runtime.GOOS == "windows" {
		wantInternal = tries
	}
	for _, tc := range []struct {
		name   string
		err    error
		builds int
	}{
		{"internal error", internal, wantInternal},
		{"other error", other, 1},
		{"no error", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			builds := 0
			cmd, err := Start(t, func() *exec.Cmd {
				builds++
				c := exec.Command(os.Args[0], "-test.run=^$")
				c.Err = tc.err
				return c
			})
			if builds != tc.builds {
				t.Errorf("build called %d times, want %d", builds, tc.builds)
			}
			if !errors.Is(err, tc.err) && !(tc.err == nil && err == nil) {
				t.Errorf("Start: %v, want %v", err, tc.err)
			}
			if err == nil {
				if werr := cmd.Wait(); werr != nil {
					t.Errorf("the started command: %v", werr)
				}
			}
		})
	}
}

// StartCmd starts the command it was given, and on a retry a copy of it that starts.
func TestStartCmdCopiesTheCommand(t *testing.T) {
	c := exec.Command(os.Args[0], "-test.run=^$")
	got, err := StartCmd(t, c)
	if err != nil || got != c {
		t.Fatalf("StartCmd = %p, %v; want the command itself (%p)", got, err, c)
	}
	if err := got.Wait(); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		return
	}
	c = exec.Command(os.Args[0], "-test.run=^$")
	c.Err = &fs.PathError{Op: "fork/exec", Path: c.Path, Err: errorInternalError}
	got, err = StartCmd(t, c)
	if err != nil || got == c {
		t.Fatalf("StartCmd after a transient failure = %p, %v; want a started copy", got, err)
	}
	if err := got.Wait(); err != nil {
		t.Fatal(err)
	}
}

// A command from exec.CommandContext is started once: a copy could not carry its context.
func TestStartCmdDoesNotRetryACommandWithAContext(t *testing.T) {
	c := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	c.Err = &fs.PathError{Op: "fork/exec", Path: c.Path, Err: errorInternalError}
	got, err := StartCmd(t, c)
	if got != c || !errors.Is(err, errorInternalError) {
		t.Fatalf("StartCmd = %p, %v; want the command itself (%p) and its start's error", got, err, c)
	}
}
