//go:build unix

package e2e

import (
	"regexp"
	"strconv"
	"strings"
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

// An owner silent for less than the 30 s --kill-wedged requires is not signalled, and the
// refusal says so, with the time left and what to retry with, instead of calling it busy.
func TestKillWedgedTooEarlySaysHowLongIsLeft(t *testing.T) {
	home := newHome(t, hourly)
	owner := start(t, home, "daemon", "--heartbeat", "200ms", "--on-takeover", "deny")
	waitOwner(t, home, owner.pid())
	owner.signal(syscall.SIGSTOP)
	defer owner.signal(syscall.SIGCONT)

	_, stderr, code := run(t, home, "daemon", "--takeover", "--kill-wedged", "--timeout", "2s")
	if code != 75 {
		t.Fatalf("kill-wedged 2 s into a suspension: exit %d, want 75; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"has not written a heartbeat for", "30s", "--timeout 30s or more"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("refusal lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "busy") {
		t.Errorf("a silent owner is called busy:\n%s", stderr)
	}
	m := regexp.MustCompile(`([0-9.]+)s to go`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("refusal does not say how long is left (\"…s to go\"):\n%s", stderr)
	}
	// Silent for about the 2 s of the timeout (plus start-up): some 28 s of the 30 s are left.
	if left, _ := strconv.ParseFloat(m[1], 64); left < 15 || left > 29 {
		t.Errorf("%ss to go, want about 28s:\n%s", m[1], stderr)
	}
	owner.signal(syscall.SIGCONT)
	if s := waitOwner(t, home, owner.pid()); !owner.running() || s.Owner.PID != owner.pid() {
		t.Fatalf("the suspended owner was ended: %+v", s)
	}
}
