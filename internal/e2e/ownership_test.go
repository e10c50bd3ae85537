//go:build unix || windows

package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Two daemons on one home: the second exits 75 naming the first, which keeps owning.
func TestSecondDaemonExits75NamingTheFirst(t *testing.T) {
	home := newHome(t, hourly)
	first := start(t, home, "daemon")
	s := waitOwner(t, home, first.pid())

	_, stderr, code := run(t, home, "daemon")
	if code != 75 {
		t.Fatalf("second daemon exited %d, want 75; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", first.pid()), "routinely daemon", fmt.Sprintf("epoch %d", s.Owner.Epoch), "--takeover", "--wait"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("second daemon's message lacks %q:\n%s", want, stderr)
		}
	}
	if !first.running() {
		t.Fatal("the first daemon exited")
	}
	if after := status(t, home); after.Owner == nil || after.Owner.PID != first.pid() || after.Owner.Epoch != s.Owner.Epoch {
		t.Fatalf("owner changed: %+v", after.Owner)
	}
}

// `daemon --wait` owns within 1 s of the owner being SIGKILLed, with epoch + 1.
func TestWaitTakesOverWithinASecondOfSIGKILL(t *testing.T) {
	home := newHome(t, hourly)
	first := start(t, home, "daemon")
	s1 := waitOwner(t, home, first.pid())

	standby := start(t, home, "daemon", "--wait")
	standby.waitStderr("Standing by", ownDeadline)
	if r, _ := readOwnerRecord(s1.StateDir); r.PID != first.pid() {
		t.Fatalf("standby took over while the owner lived: %+v", r)
	}

	killedAt := time.Now()
	first.signal(syscall.SIGKILL)
	deadline := time.Now().Add(ownDeadline)
	var rec ownerRecord
	for {
		if r, ok := readOwnerRecord(s1.StateDir); ok && r.PID == standby.pid() {
			rec = r
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("standby does not own %s after SIGKILL", ownDeadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// acquired_at is stamped by the standby itself, so polling latency does not blur it.
	if took := rec.AcquiredAt.Sub(killedAt); took > time.Second {
		t.Errorf("standby owned %s after SIGKILL, want ≤ 1s", took)
	}
	if rec.Epoch != s1.Owner.Epoch+1 {
		t.Errorf("epoch after takeover = %d, want %d", rec.Epoch, s1.Owner.Epoch+1)
	}
	s2 := waitOwner(t, home, standby.pid())
	if s2.Owner.Epoch != s1.Owner.Epoch+1 {
		t.Errorf("status epoch = %d, want %d", s2.Owner.Epoch, s1.Owner.Epoch+1)
	}
	standby.stopWith(syscall.SIGTERM)
}

// --takeover against --on-takeover deny: exit 75 and the owner keeps running.
func TestTakeoverDenied(t *testing.T) {
	home := newHome(t, hourly)
	owner := start(t, home, "daemon", "--on-takeover", "deny")
	s1 := waitOwner(t, home, owner.pid())

	_, stderr, code := run(t, home, "daemon", "--takeover", "--timeout", "30s")
	if code != 75 {
		t.Fatalf("challenger exited %d, want 75; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "denied") || !strings.Contains(stderr, fmt.Sprintf("pid %d", owner.pid())) {
		t.Errorf("challenger's message should say denied and name pid %d:\n%s", owner.pid(), stderr)
	}
	time.Sleep(500 * time.Millisecond)
	if !owner.running() {
		t.Fatalf("owner exited after denying; stderr:\n%s", owner.stderr.String())
	}
	if s2 := status(t, home); s2.Owner == nil || s2.Owner.PID != owner.pid() || s2.Owner.Epoch != s1.Owner.Epoch || s2.ExitCode != 0 {
		t.Fatalf("owner changed or unhealthy after a denied takeover: %+v", s2)
	}
}

// --takeover against the default allow: the challenger owns with epoch + 1, the first exits 0.
// SIGINT then drains and releases: exit 0 and no owner.
func TestTakeoverAllowed(t *testing.T) {
	home := newHome(t, hourly)
	owner := start(t, home, "daemon")
	s1 := waitOwner(t, home, owner.pid())

	challenger := start(t, home, "daemon", "--takeover", "--timeout", "30s")
	if code := owner.wait(ownDeadline); code != 0 {
		t.Fatalf("approving owner exited %d, want 0", code)
	}
	if !strings.Contains(owner.stderr.String(), "Takeover approved") {
		t.Errorf("owner did not say it handed over:\n%s", owner.stderr.String())
	}
	s2 := waitOwner(t, home, challenger.pid())
	if s2.Owner.Epoch != s1.Owner.Epoch+1 {
		t.Errorf("epoch = %d, want %d", s2.Owner.Epoch, s1.Owner.Epoch+1)
	}
	// A daemon owner answers by policy at once, so the challenger only shows that it asked.
	challenger.waitStderr(fmt.Sprintf("asking the routinely daemon (pid %d) to hand over", owner.pid()), ownDeadline)

	challenger.stopWith(syscall.SIGINT)
	if s3 := status(t, home); s3.Held || s3.ExitCode != 3 {
		t.Fatalf("after SIGINT: %+v, want no owner (exit 3)", s3)
	}
}

// `--wait --timeout` gives up with 75 naming the owner; Ctrl-C on a standby exits 0.
func TestStandbyTimeoutAndInterrupt(t *testing.T) {
	home := newHome(t, hourly)
	owner := start(t, home, "daemon")
	waitOwner(t, home, owner.pid())

	_, stderr, code := run(t, home, "daemon", "--wait", "--timeout", "1s")
	if code != 75 || !strings.Contains(stderr, fmt.Sprintf("pid %d", owner.pid())) {
		t.Fatalf("--wait --timeout 1s: exit %d, want 75 naming pid %d; stderr:\n%s", code, owner.pid(), stderr)
	}
	standby := start(t, home, "daemon", "--wait")
	standby.waitStderr("Standing by", ownDeadline)
	standby.stopWith(syscall.SIGINT)
	if s := status(t, home); s.Owner == nil || s.Owner.PID != owner.pid() {
		t.Fatalf("owner changed: %+v", s.Owner)
	}
}
