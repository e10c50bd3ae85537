package scheduler

import (
	"reflect"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// Once the owner stops handling slots, States says since which slot the routine is overdue,
// while Next keeps naming the next upcoming slot; a paused routine is never overdue.
func TestStatesOverdueWhenNobodyHandlesTheSlots(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.advance(2*time.Minute, time.Minute) // 08:01 and 08:02 ran
	eventually(t, "drained", func() bool { return h.gate.inFlight.Load() == 0 && h.e.idle() })
	h.stop()
	cfg, err := config.LoadConfig(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := States(cfg, h.j, start.Add(2*time.Minute+10*time.Second))
	if err != nil || len(st) != 1 {
		t.Fatalf("states: %+v %v", st, err)
	}
	if st[0].Overdue != nil {
		t.Errorf("overdue %v right after the last slot ran", st[0].Overdue)
	}
	now := start.Add(5*time.Minute + time.Second) // 08:03, 08:04 and 08:05 passed unhandled
	st, err = States(cfg, h.j, now)
	if err != nil || len(st) != 1 {
		t.Fatalf("states: %+v %v", st, err)
	}
	if want := start.Add(3 * time.Minute); st[0].Overdue == nil || !st[0].Overdue.Equal(want) {
		t.Errorf("overdue %v, want since %v", st[0].Overdue, want)
	}
	if want := start.Add(6 * time.Minute); st[0].Next == nil || !st[0].Next.Equal(want) {
		t.Errorf("next %v, want %v", st[0].Next, want)
	}
	if err := h.j.SetPaused("tick", "test", nil); err != nil {
		t.Fatal(err)
	}
	if st, err = States(cfg, h.j, now); err != nil || st[0].Overdue != nil {
		t.Errorf("paused routine: overdue %v (err %v), want none", st[0].Overdue, err)
	}
}

// StatesCache gives what States gives: it reads the journal again once anything was committed
// (here a pause, from another connection as a CLI would, then a run), and between commits it
// still follows the clock: a pause whose end has passed no longer counts.
func TestStatesCacheFollowsTheJournalAndTheClock(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	cfg, err := config.LoadConfig(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var c StatesCache
	same := func(now time.Time) RoutineState {
		t.Helper()
		want, err := States(cfg, h.j, now)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.States(cfg, h.j, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || len(want) != 1 || !reflect.DeepEqual(got[0], want[0]) {
			t.Fatalf("at %v the cache says %+v, States %+v", now, got, want)
		}
		return got[0]
	}
	if st := same(start); st.Paused || st.Last != nil {
		t.Fatalf("fresh journal: %+v", st)
	}
	other, err := journal.Open(h.j.Path()) // another process's connection
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	until := start.Add(10 * time.Minute)
	if err := other.SetPaused("tick", "lunch", &until); err != nil {
		t.Fatal(err)
	}
	if st := same(start.Add(time.Minute)); !st.Paused || st.PauseNote != "lunch" {
		t.Fatalf("after another connection paused it: %+v", st)
	}
	if st := same(start.Add(11 * time.Minute)); st.Paused {
		t.Fatalf("paused after the pause's end, with no commit in between: %+v", st)
	}
	h.clock.Advance(11 * time.Minute)
	h.start()
	h.advance(time.Minute, time.Minute) // 08:12 runs
	eventually(t, "drained", func() bool { return h.gate.inFlight.Load() == 0 && h.e.idle() })
	h.stop()
	if st := same(start.Add(12*time.Minute + time.Second)); st.Last == nil || !st.Last.Slot.Equal(start.Add(12*time.Minute)) {
		t.Fatalf("after a run: %+v, want 08:12 as its last run", st)
	}
}
