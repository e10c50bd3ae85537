package scheduler

import (
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// fakeZones is a system time zone the test changes.
type fakeZones struct {
	mu sync.Mutex
	z  config.Zone
}

func newFakeZones(t *testing.T, name string) *fakeZones {
	f := &fakeZones{}
	f.set(t, name)
	return f
}

func (f *fakeZones) set(t *testing.T, name string) {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.z = config.Zone{Name: name, Loc: loc}
	f.mu.Unlock()
}

func (f *fakeZones) Zone() (config.Zone, error) { f.mu.Lock(); defer f.mu.Unlock(); return f.z, nil }

const systemZoneDaily = "[[routine]]\nname = \"daily\"\nat = [\"09:00\"]\nrun = [\"/bin/true\"]\n"

// The system zone changes from UTC to Europe/Berlin while a run is in flight: the run goes on
// and ends normally, the routine is re-armed to 09:00 Berlin, its state names the new zone, and
// no slot runs twice or goes unrecorded.
func TestSystemZoneChangeRearms(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, systemZoneDaily+"timeout = \"2h\"\n", start)
	h.zones = newFakeZones(t, "UTC")
	h.act.block = make(chan struct{})
	h.act.started = make(chan string, 4)
	h.start()
	if st := h.e.Routines()[0]; st.Timezone != "UTC" {
		t.Fatalf("timezone = %q, want UTC", st.Timezone)
	}
	h.advance(90*time.Minute, 10*time.Minute) // 09:30 UTC: the 09:00 UTC run is in flight
	h.act.waitStarted(t)

	h.zones.(*fakeZones).set(t, "Europe/Berlin")
	h.wake.tick(t)
	eventually(t, "the new zone applied", func() bool { return h.e.Routines()[0].Timezone == "Europe/Berlin" })
	st := h.e.Routines()[0]
	wantNext := time.Date(2026, 6, 2, 7, 0, 0, 0, time.UTC) // 09:00 CEST
	if st.Next == nil || !st.Next.Equal(wantNext) {
		t.Fatalf("next = %v, want %s", st.Next, wantNext)
	}
	if !st.Running {
		t.Fatalf("the run in flight was cancelled by the re-arm: %+v %+v", st, runsOf(t, h.j, "daily"))
	}
	close(h.act.block)
	eventually(t, "the run to end", h.e.idle)

	h.advance(25*time.Hour, 30*time.Minute) // to 2026-06-02 10:30 UTC
	eventually(t, "runs to end", h.e.idle)
	h.stop()
	runs := runsOf(t, h.j, "daily")
	want := []time.Time{time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC), wantNext}
	if len(runs) != len(want) {
		t.Fatalf("runs = %+v, want slots %v", runs, want)
	}
	for i, r := range runs {
		if !r.Slot.Equal(want[i]) || r.Outcome != journal.OutcomeSuccess || r.Trigger != journal.TriggerSchedule {
			t.Errorf("run %d = %s %s %s, want %s success schedule", i, r.Slot.UTC(), r.Outcome, r.Trigger, want[i])
		}
	}
	if in := h.act.runs(); len(in) != 2 || envOf(in[1].Env, "ROUTINELY_SLOT") != "2026-06-02T09:00:00+02:00" {
		t.Errorf("second run's slot env = %q, want 09:00 Berlin", envOf(in[len(in)-1].Env, "ROUTINELY_SLOT"))
	}
}

// A change that puts today's 09:00 of the new zone in the past, unclaimed, runs it once through
// catch-up (never dropped silently), and the old zone's 09:00 no longer fires.
func TestSystemZoneChangeCatchesUp(t *testing.T) {
	start := time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC)
	h := newHarness(t, systemZoneDaily, start)
	h.zones = newFakeZones(t, "UTC")
	h.start()
	h.advance(90*time.Minute, 30*time.Minute) // 07:30 UTC = 09:30 Berlin: nothing ran yet
	h.zones.(*fakeZones).set(t, "Europe/Berlin")
	h.wake.tick(t)
	eventually(t, "the catch-up run", func() bool { return len(runsOf(t, h.j, "daily")) == 1 })
	h.advance(3*time.Hour, 30*time.Minute) // past 09:00 UTC
	h.stop()
	runs := runsOf(t, h.j, "daily")
	if len(runs) != 1 || !runs[0].Slot.Equal(time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC)) ||
		runs[0].Trigger != journal.TriggerCatchUp || runs[0].Outcome != journal.OutcomeSuccess || runs[0].LateBy != 30*time.Minute {
		t.Fatalf("runs = %+v, want one catch-up run of 09:00 Berlin, 30 min late", runs)
	}
}

// envOf returns the value of key in a KEY=value list ("" if absent).
func envOf(env []string, key string) string {
	for _, kv := range env {
		if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
			return kv[len(key)+1:]
		}
	}
	return ""
}
