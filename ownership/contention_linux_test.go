package ownership

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Deleting owner.lock behind the owner's back: it stops admitting within one heartbeat, reports
// guard-replaced, and can contend again for the new guard.
func TestGuardUnlinked(t *testing.T) {
	dir := testDir(t)
	interval := 200 * time.Millisecond
	h, err := Acquire(context.Background(), Options{Dir: dir, HeartbeatInterval: interval})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Admitting() {
		t.Fatal("fresh owner not admitting")
	}
	removed := time.Now()
	if err := os.Remove(filepath.Join(dir, lockName)); err != nil {
		t.Fatal(err)
	}
	receive(t, h.Lost(), "the owner to notice the deleted guard")
	if d := time.Since(removed); d > interval+time.Second {
		t.Logf("noticed after %s (interval %s) on a loaded machine", d, interval)
	}
	if h.Admitting() || !errors.Is(h.Err(), ErrGuardReplaced) {
		t.Fatalf("after guard deletion: admitting=%v err=%v", h.Admitting(), h.Err())
	}
	if _, err := h.BeginRun("r", time.Now()); !errors.Is(err, ErrNotAdmitting) {
		t.Fatalf("BeginRun after guard deletion: %v", err)
	}
	var kinds []EventKind
	for ev := range h.Events() {
		kinds = append(kinds, ev.Kind)
	}
	if len(kinds) == 0 || kinds[len(kinds)-1] != EventGuardReplaced {
		t.Fatalf("events %v, want guard-replaced", kinds)
	}
	h2 := acquireT(t, Options{Dir: dir})
	if h2.Epoch() <= h.Epoch() {
		t.Fatalf("re-acquired epoch %d, old %d", h2.Epoch(), h.Epoch())
	}
}
