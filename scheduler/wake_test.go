package scheduler

import (
	"testing"
	"time"
)

func TestJumpDetector(t *testing.T) {
	var d jumpDetector
	w := time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC)
	var m time.Duration
	steps := []struct {
		wall, mono time.Duration
		jump       bool
	}{
		{0, 0, false},
		{15 * time.Second, 15 * time.Second, false},              // normal tick
		{15*time.Second + time.Second, 15 * time.Second, false},  // 1 s skew: under threshold
		{38 * time.Hour, 15 * time.Second, true},                 // suspend: wall ran, monotonic not
		{-time.Hour, 15 * time.Second, true},                     // clock set back
		{15 * time.Second, 15 * time.Second, false},              // steady again
		{15 * time.Second, 15*time.Second + 5*time.Second, true}, // wall slower than monotonic
	}
	for i, s := range steps {
		w, m = w.Add(s.wall), m+s.mono
		if _, jumped := d.observe(w, m); jumped != s.jump {
			t.Errorf("step %d: jumped = %v, want %v", i, jumped, s.jump)
		}
	}
}

// A backward clock jump never re-fires a claimed slot.
func TestBackwardJumpDoesNotRefire(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.advance(3*time.Minute, time.Minute)
	eventually(t, "three runs", func() bool { return len(h.act.runs()) == 3 })
	// The engine sees the wall clock two minutes earlier: re-arm and catch up from there.
	h.stop()
	h.clock = nil
	h2 := newHarnessOn(t, h, start.Add(time.Minute))
	h2.start()
	h2.advance(3*time.Minute, time.Minute)
	runs := runsOf(t, h2.j, "tick")
	seen := map[int64]bool{}
	for _, r := range runs {
		if seen[r.Slot.UnixNano()] {
			t.Fatalf("slot %s claimed twice: %+v", r.Slot, runs)
		}
		seen[r.Slot.UnixNano()] = true
	}
	if len(h.act.runs())+len(h2.act.runs()) != 4 {
		t.Fatalf("ran %d+%d times, want 3+1 (only the new 08:04 slot)", len(h.act.runs()), len(h2.act.runs()))
	}
}
