package scheduler

import (
	"slices"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// catch_up = "skip" records the latest missed slot instead of running it, and a slot older
// than catch_up_window is recorded missed under "once".
func TestCatchUpPolicies(t *testing.T) {
	for _, c := range []struct {
		name, extra, reason string
	}{
		{"skip", `catch_up = "skip"`, "catch_up = skip"},
		{"window", `catch_up_window = "30m"`, "outside catch_up_window"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mon := time.Date(2026, 6, 1, 8, 0, 0, 0, berlin)
			h := newHarness(t, "[[routine]]\nname = \"daily\"\nat = [\"09:00\"]\ntimezone = \"Europe/Berlin\"\n"+c.extra+"\nrun = [\"/bin/true\"]\n", mon)
			h.start()
			h.advance(2*time.Hour, time.Hour) // Monday ran
			h.stop()
			// Down until Wednesday 10:00; a new owner starts.
			h2 := newHarnessOn(t, h, mon.Add(50*time.Hour))
			h2.start()
			h2.settle()
			runs := runsOf(t, h2.j, "daily")
			if len(runs) != 3 || runs[2].Outcome != journal.OutcomeMissed || runs[2].Reason != c.reason || runs[1].Outcome != journal.OutcomeMissed {
				t.Fatalf("runs: %+v", runs)
			}
			if len(h2.act.runs()) != 0 {
				t.Fatalf("ran %d times after the downtime, want 0", len(h2.act.runs()))
			}
		})
	}
}

// gocron runs routines only while the gate admits; runs report to the gate (in flight, ticks);
// the `every` grid anchor survives a restart.
func TestGateElectorAndDrain(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.gate.admitting.Store(false)
	h.stepMinute()
	h.stepMinute()
	if n := len(h.act.runs()); n != 0 {
		t.Fatalf("ran %d times while not admitting", n)
	}
	h.gate.admitting.Store(true)
	h.stepMinute()
	eventually(t, "run once admitted", func() bool { return len(h.act.runs()) >= 1 })
	eventually(t, "drained", func() bool { return h.gate.inFlight.Load() == 0 && h.e.idle() })
	anchor := h.e.cfg.Routines[0].Anchor
	h.stop()
	cfg, err := config.LoadConfig(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.j.ApplyAnchors(cfg); err != nil {
		t.Fatal(err)
	}
	if anchor.IsZero() || !cfg.Routines[0].Anchor.Equal(anchor) {
		t.Fatalf("anchor %v after restart, want %v", cfg.Routines[0].Anchor, anchor)
	}
	st, err := States(cfg, h.j, start.Add(3*time.Minute+time.Second))
	if err != nil || len(st) != 1 || st[0].Next == nil || !st[0].Next.Equal(start.Add(4*time.Minute)) || st[0].Last == nil {
		t.Fatalf("states: %+v %v", st, err)
	}
}

// A new owner's first timer can fire (claimLead before its slot) and claim between arming and
// the start's catch-up pass, and the pass may even read the clock after that slot's instant
// (arming many routines, a slow fsync). The slot missed just before must still be accounted
// for: recorded missed, superseded by the timer's slot, which runs. (The chaos test found it
// neither run nor recorded: the claim made ahead bounded the pass, and dispatch dropped the
// older slot as a duplicate.)
func TestCatchUpAfterAnEarlyFirstTimer(t *testing.T) {
	for _, c := range []struct {
		name    string
		passLag time.Duration // clock advance between the timer's claim and the pass
	}{{"pass before the slot", 0}, {"pass after the slot's instant", 40 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
			h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
			h.start()
			h.advance(2*time.Minute, time.Minute) // 08:01 and 08:02 ran
			h.stop()

			// Down over 08:03; the new owner starts 30 ms before 08:04 and its first timer
			// wins the race with the start's pass.
			slot := start.Add(4 * time.Minute)
			h2 := newHarnessOn(t, h, slot.Add(-30*time.Millisecond))
			h2.afterArm = func(e *Engine) {
				e.dispatch("tick", slotEvent{slot: slot, trigger: journal.TriggerSchedule})
				eventually(t, "the 08:04 claim", func() bool {
					return slices.ContainsFunc(runsOf(t, h2.j, "tick"), func(r journal.Run) bool { return r.Slot.Equal(slot) })
				})
				h2.clock.Advance(c.passLag)
			}
			h2.start()
			h2.clock.Advance(time.Second) // 08:04 starts at its instant
			h2.settle()

			var got []string
			for _, r := range runsOf(t, h2.j, "tick") {
				got = append(got, r.Slot.Format("15:04")+" "+r.Outcome+" "+r.Reason)
			}
			slices.Sort(got) // the timer's claim and the pass's record race: order by slot
			want := []string{"08:01 success ", "08:02 success ", "08:03 missed superseded by a later slot", "08:04 success "}
			if !slices.Equal(got, want) {
				t.Fatalf("runs %q, want %q", got, want)
			}
		})
	}
}

// A new owner whose clock is behind the journal (stepped back, or another machine's) after old
// runs were pruned (keep_runs) writes nothing for slots that ran: the latest claim bounds the
// start's pass even when it lies ahead of now.
func TestCatchUpWithTheClockBehindPrunedRuns(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\nkeep_runs = 3\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.advance(20*time.Minute, time.Minute)
	h.stop()
	if err := h.j.Prune("tick", 3); err != nil {
		t.Fatal(err)
	}
	before := len(runsOf(t, h.j, "tick"))
	h2 := newHarnessOn(t, h, start.Add(10*time.Minute+30*time.Second)) // 10 minutes back
	h2.start()
	h2.settle()
	if runs := runsOf(t, h2.j, "tick"); len(runs) != before {
		t.Fatalf("the start's pass wrote %d rows for slots that ran: %+v", len(runs)-before, runs[before:])
	}
}

// An owner that yields to a takeover request before its start pass, and resumes when the
// request is withdrawn, still accounts for the slots missed before it started: the pass runs
// once the gate admits again (its timers only handle slots after the arm time).
func TestStartPassRunsWhenTheOwnerResumes(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.advance(2*time.Minute, time.Minute) // 08:01 and 08:02 ran
	h.stop()

	h2 := newHarnessOn(t, h, start.Add(3*time.Minute+30*time.Second)) // down over 08:03
	h2.afterArm = func(*Engine) { h2.gate.admitting.Store(false) }    // yielding before the pass
	h2.start()
	h2.settle()
	if runs := runsOf(t, h2.j, "tick"); len(runs) != 2 {
		t.Fatalf("the pass ran while yielding: %+v", runs)
	}
	h2.gate.admitting.Store(true) // the request was withdrawn: the owner resumes
	eventually(t, "08:03 accounted for", func() bool {
		runs := runsOf(t, h2.j, "tick")
		return len(runs) == 3 && runs[2].Slot.Equal(start.Add(3*time.Minute))
	})
	h2.settle()
	if runs := runsOf(t, h2.j, "tick"); runs[2].Trigger != journal.TriggerCatchUp || runs[2].Outcome != journal.OutcomeSuccess {
		t.Errorf("08:03: %+v, want a catch-up run", runs[2])
	}
}
