package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// hubProgramName is the program that runs the hub server (cmd/routinely-hub). It is separate
// so that no other routinely process links nats-server: its package init samples
// /proc/self/stat every second for the process's whole life, and its code made every command
// start about 8 ms slower (docs/design.md#97-the-hub-process).
const hubProgramName = "routinely-hub"

// runHub runs the hub until ctx ends (SIGINT, SIGTERM): it checks the flags, resolves the store
// and hands over to routinely-hub, which on Unix replaces this process (so signals, a service
// manager's and a shell's, reach the server itself). Errors: a bad --listen, or one of
// --tls-cert and --tls-key without the other (2); those of resolving the profile (77); no
// routinely-hub found (1); routinely-hub's exit code.
func runHub(ctx context.Context, e *env, o hubOptions) error {
	if err := checkListen(o.listen); err != nil {
		return err
	}
	tlsArgs, err := hubTLSArgs(o)
	if err != nil {
		return err
	}
	store, err := hubStore(e, o)
	if err != nil {
		return err
	}
	prog, err := hubProgram()
	if err != nil {
		return err
	}
	return execHub(ctx, e, prog, append([]string{"--listen", o.listen, "--store", store}, tlsArgs...))
}

// hubProgram finds routinely-hub: beside this executable (where make build and the packages put
// it), else on PATH. Errors: one saying where it looked and what to do.
func hubProgram() (string, error) {
	name := hubProgramName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var beside string
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		beside = filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("routinely hub needs the %s program, which is neither at %s nor on PATH: install it beside routinely (`make build` builds both), or run a stock nats-server 2.11+ with JetStream as the hub (see the README)",
		name, beside)
}

// hubExitError turns routinely-hub's end into this command's: its exit code, with nothing more
// to print (it printed its own error), or the error that kept it from running.
func hubExitError(prog string, err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return withCode(ee.ExitCode(), nil)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", prog, err)
	}
	return nil
}
