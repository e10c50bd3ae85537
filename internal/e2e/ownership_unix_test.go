//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Windows refuses to delete a file that is open, so owner.lock cannot be deleted behind an owner
// there (ownership's TestGuardCannotBeDeletedWhileOwned): this is the Unix case.

// owner.lock deleted behind the owner's back: it stops, contends again through the normal path
// and owns the new guard with a new epoch.
func TestGuardDeletedDaemonOwnsAgain(t *testing.T) {
	home := newHome(t, hourly)
	d := start(t, home, "daemon", "--heartbeat", "200ms")
	s1 := waitOwner(t, home, d.pid())
	if err := os.Remove(filepath.Join(s1.StateDir, "owner.lock")); err != nil {
		t.Fatal(err)
	}
	d.waitStderr("standing by to own again", ownDeadline)
	waitStatus(t, home, fmt.Sprintf("the daemon owning again, healthy, with epoch %d", s1.Owner.Epoch+1), func(s statusOut) bool {
		return s.Owner != nil && s.Owner.PID == d.pid() && s.Owner.Epoch == s1.Owner.Epoch+1 && s.ExitCode == 0
	})
}
