//go:build unix

package action

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// shellCommand runs script with /bin/sh -c.
func shellCommand(script string) (argv []string, cmdLine string) {
	return []string{"/bin/sh", "-c", script}, ""
}

// procTree is a command's process group: the child is started as the leader of a new group
// (Setpgid), so everything it forks stays in the group unless it escapes with setsid/setpgid.
//
// Being its own group also puts the run out of reach of whatever ends the owner, so a run could
// outlive an owner that dies mid-run. The scheduler's next owner ends such a run's group before
// it starts any run (scheduler/orphans.go). Pdeathsig is deliberately not set: it would reach the
// leader only, not what the leader started, and fires when the OS thread that forked the child
// exits, which in Go is not the death of the owner (the Pdeathsig note of syscall.SysProcAttr).
type procTree struct{ pgid int }

func newProcTree(cmd *exec.Cmd, _ string) *procTree {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &procTree{}
}

// attach records the group id, which is the leader's pid.
func (t *procTree) attach(p *os.Process) { t.pgid = p.Pid }

func (t *procTree) close() {}

// terminate sends SIGTERM to the whole group led by p.
func (t *procTree) terminate(p *os.Process) error {
	return ignoreGone(syscall.Kill(-p.Pid, syscall.SIGTERM))
}

// reap waits until no member of the group is left or deadline passes, then sends SIGKILL to
// whatever is left. The group id stays reserved while any member lives, so signalling it after
// the leader was reaped reaches only its own descendants.
func (t *procTree) reap(deadline time.Time) {
	for time.Now().Before(deadline) && syscall.Kill(-t.pgid, 0) == nil {
		time.Sleep(25 * time.Millisecond)
	}
	_ = ignoreGone(syscall.Kill(-t.pgid, syscall.SIGKILL))
}

func ignoreGone(err error) error {
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
