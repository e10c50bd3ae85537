//go:build linux || windows

package ownership

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A suspended owner (SIGSTOP on Linux, NtSuspendProcess on Windows: a sleeping laptop) keeps the routines: challengers are refused the whole
// time, the observer says not-heartbeating, and once resumed the owner carries on unharmed.
func TestSuspendedOwnerKeepsOwnership(t *testing.T) {
	dir := testDir(t)
	interval := 200 * time.Millisecond
	owner := startHelper(t, "contender", dir, fmt.Sprintf("%s=%d", envInterval, interval.Milliseconds()))
	owner.send("acquire")
	epoch, _, _, token := parseOwned(t, owner.expect("owned", long))
	obs := NewObserver(dir)
	eventually(t, long, "healthy owner observed", func() bool {
		st, err := obs.Observe()
		return err == nil && st.Healthy() && st.Alive
	})
	suspend(t, owner)
	stopped := time.Now()
	var sawWedge bool
	for time.Since(stopped) < 4*interval || !sawWedge {
		if time.Since(stopped) > long {
			t.Fatal("observer never reported not-heartbeating")
		}
		if _, err := Acquire(context.Background(), Options{Dir: dir}); !errors.Is(err, ErrOwned) {
			t.Fatalf("challenger not refused while the owner is stopped: %v", err)
		}
		st, err := obs.Observe()
		if err != nil {
			t.Fatal(err)
		}
		if hasDiag(st, DiagNotHeartbeating) {
			sawWedge = true
			if !st.Alive || !heldBy(st, owner.pid()) {
				t.Fatalf("stopped owner: %+v", st)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	resume(t, owner)
	eventually(t, long, "owner heartbeats again", func() bool {
		st, err := obs.Observe()
		return err == nil && st.Healthy()
	})
	r, _ := readRecord(dir)
	if r.Epoch != epoch || r.Token != token || r.PID != owner.pid() || r.State != StateOwning {
		t.Fatalf("after SIGCONT: %+v", r)
	}
	owner.send("admitting")
	if f := owner.expect("admitting", long); f[1] != "true" {
		t.Fatalf("owner not admitting after SIGCONT: %q", f)
	}
}
