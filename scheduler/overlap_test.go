package scheduler

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"

	"github.com/routinely/routinely/scheduler/action"
)

func overlapHarness(t *testing.T, policy string) *harness {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, `[[routine]]
name = "slow"
every = "1m"
timeout = "1h"
overlap = "`+policy+`"
run = ["/bin/true"]
`, start)
	h.act.block = make(chan struct{})
	h.act.started = make(chan string, 10)
	h.start()
	return h
}

// stepMinute advances the fake clock to the next minute slot and waits for gocron's re-arm.
func (h *harness) stepMinute() {
	h.settle()
	h.clock.Advance(time.Minute)
	h.settle()
}

func TestOverlapSkip(t *testing.T) {
	h := overlapHarness(t, config.OverlapSkip)
	h.stepMinute()
	h.act.waitStarted(t)
	h.stepMinute() // slot 2 while slot 1 runs
	eventually(t, "skip recorded", func() bool { return countOutcome(runsOf(t, h.j, "slow"), journal.OutcomeSkipped) == 1 })
	close(h.act.block)
	eventually(t, "first run done", func() bool { return countOutcome(runsOf(t, h.j, "slow"), journal.OutcomeSuccess) == 1 })
	runs := runsOf(t, h.j, "slow")
	if runs[0].Outcome != journal.OutcomeSuccess || runs[1].Outcome != journal.OutcomeSkipped || runs[1].Reason != "overlap" {
		t.Fatalf("runs: %+v", runs)
	}
}

func TestOverlapQueueKeepsOnePending(t *testing.T) {
	h := overlapHarness(t, config.OverlapQueue)
	h.stepMinute()
	h.act.waitStarted(t)
	h.stepMinute() // queued
	h.stepMinute() // second pending: skipped
	eventually(t, "skip recorded", func() bool { return countOutcome(runsOf(t, h.j, "slow"), journal.OutcomeSkipped) == 1 })
	close(h.act.block)
	eventually(t, "queued run done", func() bool { return countOutcome(runsOf(t, h.j, "slow"), journal.OutcomeSuccess) == 2 })
	if n := len(h.act.runs()); n != 2 {
		t.Fatalf("ran %d times, want 2 (one running, one queued)", n)
	}
}

func TestOverlapReplaceCancelsRunning(t *testing.T) {
	h := overlapHarness(t, config.OverlapReplace)
	h.stepMinute()
	h.act.waitStarted(t)
	h.stepMinute() // replaces the first
	h.act.waitStarted(t)
	close(h.act.block)
	eventually(t, "both recorded", func() bool {
		r := runsOf(t, h.j, "slow")
		return len(r) == 2 && r[1].Outcome == journal.OutcomeSuccess
	})
	runs := runsOf(t, h.j, "slow")
	if runs[0].Outcome != journal.OutcomeInterrupted || runs[0].Reason != "replaced" {
		t.Fatalf("first run: %+v", runs[0])
	}
}

func TestTimeoutAndPanicOutcomes(t *testing.T) {
	h := overlapHarness(t, config.OverlapSkip)
	h.e.mu.Lock()
	h.e.routines["slow"].r.Timeout = 30 * time.Second
	h.e.mu.Unlock()
	h.stepMinute()
	h.act.waitStarted(t)
	h.clock.Advance(31 * time.Second)
	eventually(t, "timeout recorded", func() bool {
		r := runsOf(t, h.j, "slow")
		return len(r) == 1 && r[0].Outcome == journal.OutcomeTimeout
	})
	eventually(t, "the timed-out run to end", h.e.idle) // else the next slot meets it: overlap
	h.act.mu.Lock()
	h.act.panics, h.act.block = true, nil
	h.act.mu.Unlock()
	h.clock.Advance(29 * time.Second)
	h.settle()
	h.act.waitStarted(t)
	eventually(t, "crash recorded", func() bool {
		r := runsOf(t, h.j, "slow")
		return len(r) == 2 && r[1].Outcome == journal.OutcomeCrashed
	})
}

func TestPauseSkipsAndSurvivesRestartResumeDoesNotReplay(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	body := `[[routine]]
name = "tick"
every = "1m"
run = ["/bin/true"]
`
	h := newHarness(t, body, start)
	h.start()
	if err := h.j.SetPaused("tick", "holiday", nil); err != nil {
		t.Fatal(err)
	}
	h.e.refreshPauses() // what the request poller does every 0.5 s
	h.stepMinute()
	h.stepMinute()
	h.stop() // restart: a new engine (a new owner) over the same journal
	h.gate = newGate(2)
	h.start()
	h.stepMinute()
	eventually(t, "three paused skips", func() bool { return countOutcome(runsOf(t, h.j, "tick"), journal.OutcomeSkipped) == 3 })
	st := h.e.Routines()
	if len(st) != 1 || !st[0].Paused || st[0].PauseNote != "holiday" {
		t.Fatalf("state: %+v", st)
	}
	if err := h.j.Resume("tick"); err != nil {
		t.Fatal(err)
	}
	h.e.refreshPauses()
	h.stepMinute()
	eventually(t, "run after resume", func() bool { return countOutcome(runsOf(t, h.j, "tick"), journal.OutcomeSuccess) == 1 })
	if n := len(h.act.runs()); n != 1 {
		t.Fatalf("ran %d times after resume, want 1 (no replay)", n)
	}
	for _, r := range runsOf(t, h.j, "tick") {
		if r.Outcome == journal.OutcomeSkipped && r.Reason != "paused" {
			t.Fatalf("skip reason %q", r.Reason)
		}
	}
}

func TestAutoPauseAfterConsecutiveFailures(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, `[[routine]]
name = "flaky"
every = "1m"
auto_pause_after = 3
run = ["/bin/false"]
`, start)
	h.act.result = func(int) action.Result { return action.Result{Outcome: journal.OutcomeFailed, Attempts: 1} }
	h.start()
	for range 5 {
		h.stepMinute()
	}
	// A paused slot is recorded by the timer's task itself, which settle does not wait for.
	eventually(t, "five slots recorded", func() bool { return len(runsOf(t, h.j, "flaky")) == 5 })
	runs := runsOf(t, h.j, "flaky")
	if countOutcome(runs, journal.OutcomeFailed) != 3 || countOutcome(runs, journal.OutcomeSkipped) != 2 {
		t.Fatalf("want 3 failures then 2 paused skips: %+v", runs)
	}
	p, _ := h.j.PauseOf("flaky", h.clock.Now())
	if !p.Paused || p.Note != "auto-paused after 3 consecutive failures" {
		t.Fatalf("pause: %+v", p)
	}
	eventually(t, "the auto-pause warning", func() bool {
		return slices.Contains(h.notes.all(), "warning: Routine paused: flaky: auto-paused after 3 consecutive failures; resume it when fixed")
	})
}

// Five failures then a success give exactly one failure and one recovery notification.
func TestFailureAlertsWithoutSpam(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, `[[routine]]
name = "flaky"
every = "1m"
auto_pause_after = 0
run = ["/bin/false"]
`, start)
	h.act.result = func(n int) action.Result {
		if n <= 5 {
			return action.Result{Outcome: journal.OutcomeFailed, Attempts: 1, Summary: "exit 1"}
		}
		return action.Result{Outcome: journal.OutcomeSuccess, Attempts: 1}
	}
	h.start()
	for range 6 {
		h.stepMinute()
	}
	eventually(t, "six runs", func() bool { return len(runsOf(t, h.j, "flaky")) == 6 })
	notes := h.notes.all()
	if len(notes) != 2 {
		t.Fatalf("notifications: %q, want one failure and one recovery", notes)
	}
	// The failure is a warning (the desktop shows a warning icon); the recovery is not.
	if notes[0] != "warning: flaky failed: exit 1" || notes[1] != "flaky recovered: Succeeded again after 5 failed runs." {
		t.Fatalf("notifications: %q, want the failure as a warning and the recovery as a plain one", notes)
	}
}

// overlap = "queue": a slot still waiting when the owner stops is recorded, not dropped. (A
// later slot was recorded skipped, so the next owner's catch-up, which starts after the latest
// recorded slot, would never see it.)
func TestQueuedSlotRecordedWhenStopping(t *testing.T) {
	h := overlapHarness(t, config.OverlapQueue)
	h.stepMinute()
	h.act.waitStarted(t)
	h.stepMinute() // 08:02 queued
	h.stepMinute() // 08:03 skipped: one is pending already
	eventually(t, "skip recorded", func() bool { return countOutcome(runsOf(t, h.j, "slow"), journal.OutcomeSkipped) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = h.e.Stop(ctx) // the running 08:01 is cut short
	h.e = nil
	runs := runsOf(t, h.j, "slow")
	slots := map[time.Time]string{}
	for _, r := range runs {
		slots[r.Slot.UTC()] = r.Outcome
	}
	base := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	for m := 1; m <= 3; m++ {
		if _, ok := slots[base.Add(time.Duration(m)*time.Minute)]; !ok {
			t.Fatalf("slot 08:0%d has no record: %+v", m, runs)
		}
	}
	if len(h.act.runs()) != 1 {
		t.Fatalf("ran %d times, want 1", len(h.act.runs()))
	}
}

// Catch-up after a wake and a timer firing late can hand the same slot to dispatch twice. The
// second must be dropped as a duplicate: treated as an overlap it would be recorded skipped (or,
// under replace, cancel the run), and its record could win the claim so the slot never runs.
func TestSameSlotDispatchedTwiceRunsOnce(t *testing.T) {
	for _, policy := range []string{config.OverlapSkip, config.OverlapQueue, config.OverlapReplace} {
		t.Run(policy, func(t *testing.T) {
			h := overlapHarness(t, policy)
			close(h.act.block) // runs end at once
			h.act.block = nil
			h.settle()
			h.clock.Advance(90 * time.Second) // 08:01:30: the 08:01 slot passed unhandled
			slot := time.Date(2026, 6, 1, 8, 1, 0, 0, time.UTC)
			h.e.dispatch("slow", slotEvent{slot: slot, trigger: journal.TriggerCatchUp})  // the wake's catch-up pass
			h.e.dispatch("slow", slotEvent{slot: slot, trigger: journal.TriggerSchedule}) // the late timer
			eventually(t, "the slot recorded", func() bool {
				r := runsOf(t, h.j, "slow")
				return len(r) == 1 && r[0].Outcome != journal.OutcomeRunning
			})
			h.settle()
			runs := runsOf(t, h.j, "slow")
			if len(runs) != 1 || runs[0].Outcome != journal.OutcomeSuccess || len(h.act.runs()) != 1 {
				t.Fatalf("runs: %+v (%d started)", runs, len(h.act.runs()))
			}
		})
	}
}

// overlap = "replace" with a jitter longer than the interval: a run replaced while it still
// waits for its jitter never claimed its slot. The slot is recorded (skipped, replaced), and
// the last one, cut off by Stop, is recorded missed: none is silently dropped.
func TestReplacedDuringJitterIsRecorded(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"slow\"\nevery = \"1m\"\njitter = \"5m\"\noverlap = \"replace\"\nrun = [\"/bin/true\"]\n", start)
	h.act.block = make(chan struct{}) // settle: do not wait for runs to end (they wait for jitter)
	h.start()
	h.e.jitter = func(max time.Duration) time.Duration { return max - time.Second }
	for range 3 {
		h.stepMinute()
		// The newest slot's run is the one in flight (the replaced one has ended).
		eventually(t, "the replacing run in flight", func() bool {
			h.e.mu.Lock()
			defer h.e.mu.Unlock()
			a := h.e.routines["slow"]
			return a.running != nil && a.pending == nil && a.running.ev.slot.Equal(a.dispatched)
		})
	}
	eventually(t, "two replaced slots recorded", func() bool { return countOutcome(runsOf(t, h.j, "slow"), journal.OutcomeSkipped) == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = h.e.Stop(ctx) // the 08:03 run is still waiting for its jitter: Stop cuts it off
	h.e = nil
	want := map[string]string{"08:01": "skipped replaced", "08:02": "skipped replaced", "08:03": "missed owner stopped before the run started"}
	runs := runsOf(t, h.j, "slow")
	for _, r := range runs {
		k := r.Slot.UTC().Format("15:04")
		if got := r.Outcome + " " + r.Reason; got != want[k] {
			t.Errorf("slot %s: %q, want %q", k, got, want[k])
		}
		delete(want, k)
	}
	if len(want) != 0 || len(h.act.runs()) != 0 {
		t.Fatalf("slots without a record: %v; runs started: %d; rows: %+v", want, len(h.act.runs()), runs)
	}
}
