//go:build unix

package e2e

import (
	"syscall"
	"testing"
	"time"
)

// --kill-wedged never touches a healthy owner, and ends one that stopped heartbeating.
func TestKillWedged(t *testing.T) {
	home := newHome(t, hourly)
	owner := start(t, home, "daemon", "--heartbeat", "200ms", "--on-takeover", "deny")
	s1 := waitOwner(t, home, owner.pid())

	// Healthy (and denying): refused, not signalled.
	_, stderr, code := run(t, home, "daemon", "--takeover", "--kill-wedged", "--timeout", "2s", "--wedge-threshold", "1s")
	if code != 75 {
		t.Fatalf("kill-wedged against a healthy owner: exit %d, want 75; stderr:\n%s", code, stderr)
	}
	time.Sleep(300 * time.Millisecond)
	if !owner.running() {
		t.Fatal("a healthy owner was killed")
	}

	// Suspended: its heartbeat goes stale, so after the timeout it is ended and replaced.
	owner.signal(syscall.SIGSTOP)
	challenger := start(t, home, "daemon", "--takeover", "--kill-wedged", "--timeout", "2s", "--wedge-threshold", "1s")
	owner.wait(ownDeadline) // SIGTERM (it may drain and exit 0 once continued), else SIGKILL
	s2 := waitOwner(t, home, challenger.pid())
	if s2.Owner.Epoch != s1.Owner.Epoch+1 {
		t.Fatalf("epoch %d after kill-wedged, want %d", s2.Owner.Epoch, s1.Owner.Epoch+1)
	}
}
