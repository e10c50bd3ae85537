package ownership_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/routinely/routinely/internal/proctest"
	"github.com/routinely/routinely/ownership"
)

// One process owns a state directory at a time, and a process owns it once only (a second
// Acquire in the same process fails with ErrHeldInProcess). So the examples that need another
// owner start one as a real process: this test binary again, with exampleOwnerEnv naming the
// directory. That owner allows takeovers, and releases when its standard input closes.
const exampleOwnerEnv = "ROUTINELY_EXAMPLE_OWNER"

func init() {
	if dir := os.Getenv(exampleOwnerEnv); dir != "" {
		os.Exit(runExampleOwner(dir))
	}
}

// runExampleOwner owns dir, says "owning EPOCH" on stdout, and returns once it no longer owns:
// it yielded to a takeover, or its stdin closed and it released.
func runExampleOwner(dir string) int {
	ctx := context.Background()
	h, err := ownership.Acquire(ctx, ownership.Options{Dir: dir, Role: ownership.RoleDaemon,
		Version: "example", Policy: ownership.PolicyAllow})
	if err != nil {
		fmt.Fprintln(os.Stderr, "example owner:", err)
		return 1
	}
	fmt.Println("owning", h.Epoch())
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	select {
	case <-h.Lost(): // yielded: a takeover was approved
	case <-stdinClosed:
		if err := h.Release(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "example owner: release:", err)
			return 1
		}
	}
	return 0
}

// exampleOwner is an owner running in another process.
type exampleOwner struct {
	cmd   *exec.Cmd
	stdin io.Closer
	epoch uint64
}

// startExampleOwner starts a process that owns dir and returns once it owns.
func startExampleOwner(dir string) (*exampleOwner, error) {
	var stdin io.WriteCloser
	var stdout io.ReadCloser
	cmd, err := proctest.Start(proctest.Stderr, func() *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), exampleOwnerEnv+"="+dir)
		cmd.Stderr = os.Stderr
		var errIn, errOut error
		stdin, errIn = cmd.StdinPipe()
		stdout, errOut = cmd.StdoutPipe()
		if err := errors.Join(errIn, errOut); err != nil {
			cmd.Err = err // Start returns it and starts nothing
		}
		return cmd
	})
	if err != nil {
		return nil, err
	}
	o := &exampleOwner{cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "owning %d", &o.epoch); err != nil || serr != nil {
		_ = o.stop()
		return nil, fmt.Errorf("example owner did not start: %q (%v)", strings.TrimSpace(line), errors.Join(err, serr))
	}
	return o, nil
}

// stop asks the owner to release (closes its stdin) and waits for it to exit; an owner that
// yielded to a takeover has exited already.
func (o *exampleOwner) stop() error {
	_ = o.stdin.Close()
	return o.cmd.Wait()
}

// exampleStateDir makes a fresh state directory (with StateDir, as the app does for --home) and
// returns it with a function that removes it.
func exampleStateDir() (string, func(), error) {
	home, err := os.MkdirTemp("", "routinely-example-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(home) }
	dir, err := ownership.StateDir(filepath.Join(home, "state")) // created 0700; unsafe ones refused
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// Acquire makes this process the owner of a state directory, without waiting: every run starts
// through the handle (BeginRun) and is stamped with its epoch. Release ends the ownership; the
// next owner's epoch is greater, so the journal refuses anything an earlier owner writes late.
func ExampleAcquire() {
	dir, cleanup, err := exampleStateDir()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cleanup()
	ctx := context.Background()
	opts := ownership.Options{Dir: dir, Role: ownership.RoleDaemon, Version: "example"}

	h, err := ownership.Acquire(ctx, opts)
	if err != nil {
		fmt.Println(err) // *OwnedError (errors.Is ErrOwned) names the owner when another process owns
		return
	}
	fmt.Println("owner: epoch", h.Epoch(), h.Record().State)
	done, err := h.BeginRun("backup", time.Now()) // the scheduler asks before every run
	if err != nil {
		fmt.Println(err)
		return
	}
	done() // the run has ended and been recorded: Release no longer waits for it
	if err := h.Release(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("after Release:", h.Err())
	if _, err := h.BeginRun("backup", time.Now()); errors.Is(err, ownership.ErrNotAdmitting) {
		fmt.Println("no run starts after Release")
	}

	next, err := ownership.Acquire(ctx, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = next.Release(ctx) }()
	fmt.Println("next owner: epoch", next.Epoch())
	// Output:
	// owner: epoch 1 owning
	// after Release: ownership released
	// no run starts after Release
	// next owner: epoch 2
}

// While another process owns, Acquire is refused with an error naming that owner, and Wait
// stands by (trying the guard every 20 ms) until the owner releases, or dies: the kernel drops
// its lock then.
func ExampleWait() {
	dir, cleanup, err := exampleStateDir()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cleanup()
	owner, err := startExampleOwner(dir) // another process owns dir
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	opts := ownership.Options{Dir: dir, Role: ownership.RoleDesktop, Version: "example"}

	_, err = ownership.Acquire(ctx, opts)
	var owned *ownership.OwnedError
	if errors.As(err, &owned) && owned.Holder != nil { // owned.Error() names role, pid, host, since, epoch
		fmt.Printf("Acquire refused (ErrOwned: %v): the %s of epoch %d owns\n",
			errors.Is(err, ownership.ErrOwned), owned.Holder.Role, owned.Holder.Epoch)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- owner.stop() }() // meanwhile the owner releases and exits
	h, err := ownership.Wait(ctx, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = h.Release(ctx) }()
	fmt.Println("Wait returned: owner of epoch", h.Epoch())
	fmt.Println("the earlier owner exited cleanly:", <-stopped == nil)
	// Output:
	// Acquire refused (ErrOwned: true): the daemon of epoch 1 owns
	// Wait returned: owner of epoch 2
	// the earlier owner exited cleanly: true
}

// Takeover asks the owner to step aside: it writes a request addressed to the owner, which
// answers by its policy (here PolicyAllow; PolicyAsk asks its user), stops admitting runs, waits
// for those in flight and releases; Takeover then takes the guard. ErrDenied and
// ErrTakeoverTimeout say when the owner refused or did not yield in time.
func ExampleTakeover() {
	dir, cleanup, err := exampleStateDir()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cleanup()
	owner, err := startExampleOwner(dir) // another process owns dir and allows takeovers
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	h, err := ownership.Takeover(ctx, ownership.Options{Dir: dir, Role: ownership.RoleDesktop, Version: "example"},
		ownership.TakeoverOptions{Timeout: 30 * time.Second, Reason: "the desktop app started"})
	if err != nil {
		fmt.Println(err)
		_ = owner.stop()
		return
	}
	defer func() { _ = h.Release(ctx) }()
	fmt.Println("took over from epoch", owner.epoch, "as epoch", h.Epoch())
	fmt.Println("the earlier owner yielded and exited:", owner.stop() == nil)
	// Output:
	// took over from epoch 1 as epoch 2
	// the earlier owner yielded and exited: true
}
