package ownership

import (
	"os"
	"os/exec"
	"testing"

	"github.com/routinely/routinely/internal/proctest"
)

// ProcessIdentity.State tells the same process from one that merely got its pid, with real
// processes: this one, a child that has exited and been reaped, and a start time that does not
// match (what a reused pid looks like).
func TestProcessIdentityState(t *testing.T) {
	me, err := IdentifyProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s := me.State(); s != ProcessRunning {
		t.Fatalf("this process: state %d, want ProcessRunning", s)
	}
	reused := me
	reused.StartMS -= 60_000
	if reused.StartTicks != 0 {
		reused.StartTicks -= 6000
	}
	if s := reused.State(); s != ProcessReplaced {
		t.Fatalf("same pid, another start time: state %d, want ProcessReplaced", s)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child, err := proctest.StartCmd(t, exec.Command(exe, "-test.run=^$"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := IdentifyProcess(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if s := id.State(); s != ProcessGone {
		t.Fatalf("exited child: state %d, want ProcessGone", s)
	}
	if s := (ProcessIdentity{}).State(); s != ProcessGone {
		t.Fatalf("zero identity: state %d, want ProcessGone", s)
	}
}
