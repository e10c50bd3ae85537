package scheduler

import (
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// slotRows formats routine's journal rows as "15:04 trigger outcome reason", ordered by slot.
func slotRows(t *testing.T, j *journal.Journal, routine string) []string {
	t.Helper()
	runs := runsOf(t, j, routine)
	slices.SortStableFunc(runs, func(a, b journal.Run) int { return a.Slot.Compare(b.Slot) })
	out := make([]string, 0, len(runs))
	for _, r := range runs {
		row := r.Slot.UTC().Format("01-02 15:04") + " " + r.Trigger + " " + r.Outcome
		if r.Reason != "" {
			row += " " + r.Reason
		}
		out = append(out, row)
	}
	return out
}

// waitRows waits until routine's rows (slotRows) are want, failing with what they are.
func waitRows(t *testing.T, j *journal.Journal, routine string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := slotRows(t, j, routine)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rows of %s:\n  %q\nwant\n  %q", routine, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// refusedOf returns the slots of routine the gate refused that the engine still holds.
func refusedOf(e *Engine, routine string) []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a := e.routines[routine]; a != nil {
		return slices.Clone(a.refused)
	}
	return nil
}

// A slot is dispatched, then the owner yields to a takeover before the run is admitted (a
// jitter wait; a run queued behind one in flight), and the request is withdrawn: the owner
// resumes, and the slot it never claimed runs once as a catch-up (catch_up = "once") within a
// poll of the resume. Before, the slot counted as dispatched, so no pass looked at it again and
// it was neither run nor recorded. The same holds for a run-now request, and for a new owner's
// first slot refused before its start pass.
func TestRefusedSlotIsHandledWhenTheOwnerResumes(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

	t.Run("jitter wait", func(t *testing.T) {
		h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\njitter = \"30s\"\nrun = [\"/bin/true\"]\n", start)
		var jitter atomic.Int64 // the first run waits 20 s, later ones not at all
		jitter.Store(int64(20 * time.Second))
		h.jitter = func(time.Duration) time.Duration { return time.Duration(jitter.Swap(0)) }
		h.start()
		h.settle()
		h.clock.Advance(time.Minute) // 08:01 is dispatched and waits for its jitter
		eventually(t, "08:01 waiting for its jitter", func() bool {
			h.e.mu.Lock()
			defer h.e.mu.Unlock()
			return h.e.routines["tick"].running != nil
		})
		blockUntil(t, h, 2) // the jitter timer and the routine's next timer

		h.gate.admitting.Store(false) // a takeover request was approved: yielding
		h.clock.Advance(20 * time.Second)
		eventually(t, "08:01 refused by the gate", func() bool { return len(refusedOf(h.e, "tick")) == 1 && h.e.idle() })
		if rows := slotRows(t, h.j, "tick"); len(rows) != 0 {
			t.Fatalf("a refused run wrote %q", rows)
		}

		h.gate.admitting.Store(true) // the request was withdrawn: the owner resumes
		waitRows(t, h.j, "tick", "06-01 08:01 catch-up success")
		h.advance(40*time.Second, 40*time.Second) // 08:02 on time
		waitRows(t, h.j, "tick", "06-01 08:01 catch-up success", "06-01 08:02 schedule success")
		if r := refusedOf(h.e, "tick"); len(r) != 0 {
			t.Fatalf("refused slots left: %v", r)
		}
	})

	t.Run("queued behind a run", func(t *testing.T) {
		h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\noverlap = \"queue\"\nrun = [\"/bin/true\"]\n", start)
		h.act.block = make(chan struct{})
		h.act.started = make(chan string, 4)
		h.start()
		h.advance(time.Minute, time.Minute) // 08:01 runs (blocked)
		h.act.waitStarted(t)
		h.advance(time.Minute, time.Minute) // 08:02 is queued behind it
		eventually(t, "08:02 queued", func() bool {
			h.e.mu.Lock()
			defer h.e.mu.Unlock()
			return h.e.routines["tick"].pending != nil
		})

		h.gate.admitting.Store(false) // yielding: the owner waits for 08:01 to end
		close(h.act.block)            // 08:01 ends; 08:02 starts and is refused
		eventually(t, "08:02 refused by the gate", func() bool { return len(refusedOf(h.e, "tick")) == 1 && h.e.idle() })
		waitRows(t, h.j, "tick", "06-01 08:01 schedule success")

		h.gate.admitting.Store(true) // withdrawn: resume
		waitRows(t, h.j, "tick", "06-01 08:01 schedule success", "06-01 08:02 catch-up success")
	})

	t.Run("run-now request", func(t *testing.T) {
		h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1h\"\noverlap = \"queue\"\nrun = [\"/bin/true\"]\n", start)
		h.act.block = make(chan struct{})
		h.act.started = make(chan string, 4)
		h.start()
		h.advance(time.Hour, 10*time.Minute) // 09:00 runs (blocked)
		h.act.waitStarted(t)
		id, err := h.j.RequestRun("tick")
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the request queued", func() bool {
			h.e.mu.Lock()
			defer h.e.mu.Unlock()
			p := h.e.routines["tick"].pending
			return p != nil && p.requestID == id
		})

		h.gate.admitting.Store(false)
		close(h.act.block) // 09:00 ends; the request's run starts and is refused
		eventually(t, "the request's run refused", h.e.idle)
		time.Sleep(3 * h.e.pollEvery) // the poller must not serve it while yielding
		if run, err := h.j.RequestResult(id); err != nil || run != 0 {
			t.Fatalf("request answered while yielding: run %d, %v", run, err)
		}

		h.gate.admitting.Store(true)
		eventually(t, "the request's run", func() bool { run, err := h.j.RequestResult(id); return err == nil && run > 0 })
		waitRows(t, h.j, "tick", "06-01 09:00 schedule success", "06-01 09:00 manual success")
	})

	t.Run("new owner's first slot", func(t *testing.T) {
		h := newHarness(t, "[[routine]]\nname = \"tick\"\nevery = \"1m\"\njitter = \"30s\"\nrun = [\"/bin/true\"]\n", start)
		h.jitter = func(time.Duration) time.Duration { return 0 }
		h.start()
		h.advance(2*time.Minute, time.Minute) // 08:01 and 08:02 ran
		h.stop()

		// Down over 08:03; the new owner starts 30 ms before 08:04. Its first timer dispatches
		// 08:04 before the start's pass, the run waits for its jitter, and the owner yields.
		// When it resumes, the start's pass sees 08:04 as dispatched already.
		slot := start.Add(4 * time.Minute)
		h2 := newHarnessOn(t, h, slot.Add(-30*time.Millisecond))
		var jitter atomic.Int64 // 20 s until the refusal, then none
		jitter.Store(int64(20 * time.Second))
		h2.jitter = func(time.Duration) time.Duration { return time.Duration(jitter.Load()) }
		h2.afterArm = func(e *Engine) {
			// The timer fires at once (its fire time has passed) and dispatches 08:04.
			eventually(t, "08:04 waiting for its jitter", func() bool {
				e.mu.Lock()
				defer e.mu.Unlock()
				return e.routines["tick"].running != nil
			})
			blockUntil(t, h2, 2) // the jitter timer and the routine's next timer
			h2.gate.admitting.Store(false)
			h2.clock.Advance(21 * time.Second)
			eventually(t, "08:04 refused by the gate", func() bool { return len(refusedOf(e, "tick")) == 1 && e.idle() })
			jitter.Store(0)
		}
		h2.start()
		h2.gate.admitting.Store(true) // withdrawn: the start's pass runs now
		waitRows(t, h2.j, "tick", "06-01 08:01 schedule success", "06-01 08:02 schedule success",
			"06-01 08:03 catch-up missed superseded by a later slot", "06-01 08:04 catch-up success")
	})
}

// blockUntil waits (bounded) until the harness clock has n waiters.
func blockUntil(t *testing.T, h *harness, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := h.clock.BlockUntilContext(ctx, n); err != nil {
		t.Fatalf("waiting for %d clock waiters: %v", n, err)
	}
}

// An owner that yields before its start pass and resumes later checks the slots missed before
// it started against the schedule armed at its start (the one they were missed under), even when
// routines.toml changed or the system zone moved meanwhile: those apply right after the pass.
// Before, the pass used the new schedule: it recorded a slot that never existed and left the
// real one without a record.
func TestStartPassUsesTheScheduleArmedAtStart(t *testing.T) {
	monday := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	tuesday := monday.Add(25*time.Hour + 30*time.Minute) // 09:30: 09:00 passed while nobody owned

	// owner runs Monday 09:00 and stops; the next owner, over the same files, starts Tuesday
	// 09:30 and yields before its start pass.
	owner := func(t *testing.T, body string, zones func() config.ZoneSource) *harness {
		h := newHarness(t, body, monday)
		if zones != nil {
			h.zones = zones()
		}
		h.start()
		h.advance(2*time.Hour, 30*time.Minute)
		h.stop()
		waitRows(t, h.j, "daily", "06-01 09:00 schedule success")
		h2 := newHarnessOn(t, h, tuesday)
		if zones != nil {
			h2.zones = zones()
		}
		h2.afterArm = func(*Engine) { h2.gate.admitting.Store(false) }
		h2.start()
		return h2
	}

	t.Run("config reload", func(t *testing.T) {
		h2 := owner(t, "[[routine]]\nname = \"daily\"\nat = [\"09:00\"]\ntimezone = \"UTC\"\nrun = [\"/bin/true\"]\n", nil)
		if err := os.WriteFile(h2.cfg, []byte("[[routine]]\nname = \"daily\"\nat = [\"10:00\"]\ntimezone = \"UTC\"\nrun = [\"/bin/true\"]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		h2.e.Reload()
		h2.gate.admitting.Store(true)
		waitRows(t, h2.j, "daily", "06-01 09:00 schedule success", "06-02 09:00 catch-up success")
		eventually(t, "the edit applied after the pass", func() bool { return h2.e.Routines()[0].Schedule == "at 10:00" })
		h2.advance(time.Hour, 10*time.Minute) // 10:30
		waitRows(t, h2.j, "daily", "06-01 09:00 schedule success", "06-02 09:00 catch-up success", "06-02 10:00 schedule success")
	})

	t.Run("zone change", func(t *testing.T) {
		zones := newFakeZones(t, "UTC")
		h2 := owner(t, systemZoneDaily, func() config.ZoneSource { return zones })
		zones.set(t, "Asia/Tokyo") // 09:00 there is 00:00 UTC
		h2.wake.tick(t)
		h2.wake.tick(t) // the first tick was handled
		h2.gate.admitting.Store(true)
		waitRows(t, h2.j, "daily", "06-01 09:00 schedule success", "06-02 09:00 catch-up success")
		h2.wake.tick(t) // the zone change applies at the next tick after the pass
		eventually(t, "the zone change applied", func() bool { return h2.e.Routines()[0].Timezone == "Asia/Tokyo" })
		h2.settle()
		h2.advance(14*time.Hour+30*time.Minute, 30*time.Minute) // Wednesday 00:00 UTC: 09:00 in Tokyo
		waitRows(t, h2.j, "daily", "06-01 09:00 schedule success", "06-02 09:00 catch-up success", "06-03 00:00 schedule success")
	})
}

// The owner yields in the middle of its start pass (after the first routine's first record) and
// resumes: the pass goes on with the routines it had not handled, and the first routine's slot
// whose dispatch the yield refused runs within a poll of the resume. Before, the retry looked
// back to each handled routine's first arming (the start pass is not bounded by dispatched
// slots), recording missed the slots that ran and that keep_runs had pruned; and the refused
// dispatch was dropped, so that slot waited for the routine's next timer.
func TestStartPassCutShortByAYield(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1m\"\nkeep_runs = 3\nrun = [\"/bin/true\"]\n"+
		"[[routine]]\nname = \"b\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.advance(20*time.Minute, time.Minute) // 08:01 … 08:20 ran
	h.stop()
	if err := h.j.Prune("a", 3); err != nil {
		t.Fatal(err)
	}

	h2 := newHarnessOn(t, h, start.Add(22*time.Minute+30*time.Second)) // down over 08:21 and 08:22
	var once sync.Once
	h2.gate.onTick = func() { once.Do(func() { h2.gate.admitting.Store(false) }) } // after a's 08:21 record
	h2.start()
	waitRows(t, h2.j, "a", "06-01 08:18 schedule success", "06-01 08:19 schedule success", "06-01 08:20 schedule success",
		"06-01 08:21 catch-up missed superseded by a later slot")
	if rows := slotRows(t, h2.j, "b"); len(rows) != 20 {
		t.Fatalf("b was handled while yielding: %q", rows[20:])
	}

	h2.gate.admitting.Store(true) // the request was withdrawn
	waitRows(t, h2.j, "a", "06-01 08:18 schedule success", "06-01 08:19 schedule success", "06-01 08:20 schedule success",
		"06-01 08:21 catch-up missed superseded by a later slot", "06-01 08:22 catch-up success")
	eventually(t, "b's catch-up", func() bool { return len(slotRows(t, h2.j, "b")) == 22 })
	h2.settle()
	if rows := slotRows(t, h2.j, "b"); !slices.Equal(rows[20:], []string{"06-01 08:21 catch-up missed superseded by a later slot", "06-01 08:22 catch-up success"}) {
		t.Fatalf("b after the resume: %q", rows[20:])
	}
	waitRows(t, h2.j, "a", "06-01 08:18 schedule success", "06-01 08:19 schedule success", "06-01 08:20 schedule success",
		"06-01 08:21 catch-up missed superseded by a later slot", "06-01 08:22 catch-up success")
}
