//go:build unix || windows

package e2e

import (
	"syscall"
	"testing"
	"time"
)

// status --json reflects each state: no owner (3), healthy owner (0), a suspended owner that
// stopped heartbeating (4, not-heartbeating), recovered (0), released (3).
func TestStatusReflectsEachState(t *testing.T) {
	home := newHome(t, hourly)
	if s := status(t, home); s.Health != "no-owner" || s.ExitCode != 3 || s.Held || s.Owner != nil {
		t.Fatalf("fresh home: %+v, want no-owner/3", s)
	}

	d := start(t, home, "daemon", "--heartbeat", "200ms")
	s := waitOwner(t, home, d.pid())
	if s.Health != "healthy" || s.ExitCode != 0 || !s.Alive || s.Owner.Role != "daemon" || len(s.Diagnoses) != 0 {
		t.Fatalf("owning daemon: %+v, want healthy/0", s)
	}
	if len(s.Routines) != 1 || s.Routines[0].Name != "hourly-note" || s.Routines[0].Next == nil {
		t.Fatalf("routines in status: %+v", s.Routines)
	}

	// A suspended owner (a sleeping laptop, a debugger) keeps the guard but stops heartbeating.
	d.suspend()
	deadline := time.Now().Add(ownDeadline)
	for {
		s = status(t, home)
		if s.ExitCode == 4 {
			break
		}
		if time.Now().After(deadline) {
			d.resume()
			t.Fatalf("suspended owner still reported %+v", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s.Health != "unhealthy" || !s.Held || !hasDiagnosis(s, "not-heartbeating") {
		t.Errorf("suspended owner: %+v, want unhealthy with not-heartbeating", s)
	}
	if _, _, code := run(t, home, "daemon"); code != 75 {
		t.Errorf("a challenger got exit %d while the suspended owner holds the guard, want 75", code)
	}

	d.resume()
	waitStatus(t, home, "the resumed owner healthy again (exit 0)", func(s statusOut) bool { return s.ExitCode == 0 })

	d.stopWith(syscall.SIGTERM)
	if s := status(t, home); s.ExitCode != 3 || s.Held {
		t.Fatalf("after release: %+v, want no-owner/3", s)
	}
}

func hasDiagnosis(s statusOut, kind string) bool {
	for _, d := range s.Diagnoses {
		if d.Kind == kind {
			return true
		}
	}
	return false
}
