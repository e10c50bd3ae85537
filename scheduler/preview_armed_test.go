package scheduler

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// An observer's preview of an `every` routine lists the slots its owner really runs: the grid
// the owner anchored when it armed the routine (read from the journal, opened read-only), not
// one counted from the preview's start. With no journal, or an interval changed since the owner
// armed it, the grid starts at from, as arming then would.
func TestPreviewArmedFollowsTheOwnersGrid(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 13, 0, time.UTC) // the owner's grid: hh:mm:13
	h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"7m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.advance(14*time.Minute, time.Minute) // 08:07:13 and 08:14:13 ran

	ro, err := journal.OpenReadOnly(filepath.Join(h.dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ro.Close() }()
	cfg, err := config.LoadConfig(h.cfg) // as an observer loads it: no anchor
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Routines[0]
	from := time.Date(2026, 6, 1, 8, 20, 0, 0, time.UTC) // off the owner's grid
	got, err := PreviewArmed(ro, r, from, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{start.Add(21 * time.Minute), start.Add(28 * time.Minute), start.Add(35 * time.Minute)}
	if !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("preview from %s = %v, want the owner's grid %v", from.Format("15:04:05"), got, want)
	}
	if !r.Anchor.IsZero() {
		t.Fatalf("PreviewArmed modified the routine: anchor %v", r.Anchor)
	}

	// The owner runs exactly those slots.
	h.advance(36*time.Minute, time.Minute) // to 08:50:13
	var ran []time.Time
	for _, run := range runsOf(t, h.j, "tick") {
		if run.Slot.After(from) {
			ran = append(ran, run.Slot)
		}
	}
	if !slices.EqualFunc(ran[:3], want, time.Time.Equal) {
		t.Fatalf("the owner ran %v after %s, preview said %v", ran, from.Format("15:04:05"), want)
	}

	// Nothing armed it yet (no journal): the grid starts at from.
	if got, _ := PreviewArmed(nil, r, from, 2); !slices.EqualFunc(got, []time.Time{from.Add(7 * time.Minute), from.Add(14 * time.Minute)}, time.Time.Equal) {
		t.Fatalf("preview without a journal = %v", got)
	}
	// The interval changed since the owner armed it: the persisted anchor no longer applies.
	changed := *r
	changed.Every = 5 * time.Minute
	if got, _ := PreviewArmed(ro, &changed, from, 1); len(got) != 1 || !got[0].Equal(from.Add(5*time.Minute)) {
		t.Fatalf("preview after an interval change = %v, want %v", got, from.Add(5*time.Minute))
	}
}
