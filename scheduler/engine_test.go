package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/internal/syncbuf"
	"github.com/routinely/routinely/scheduler/action"
	"github.com/routinely/routinely/scheduler/journal"
)

var berlin, _ = time.LoadLocation("Europe/Berlin")

func TestEngineRunsEachSlotOnceWithEnv(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, berlin)
	h := newHarness(t, `[[routine]]
name = "daily"
at = ["09:00"]
timezone = "Europe/Berlin"
run = ["/bin/true"]
`, start)
	h.start()
	h.advance(time.Hour, time.Hour)
	eventually(t, "first run", func() bool { return len(h.act.runs()) == 1 })
	h.advance(24*time.Hour, time.Hour)
	eventually(t, "second run", func() bool { return len(h.act.runs()) == 2 })

	runs := runsOf(t, h.j, "daily")
	if len(runs) != 2 || runs[0].Outcome != journal.OutcomeSuccess || runs[1].Outcome != journal.OutcomeSuccess {
		t.Fatalf("runs: %+v", runs)
	}
	want0 := time.Date(2026, 6, 1, 9, 0, 0, 0, berlin)
	if !runs[0].Slot.Equal(want0) || !runs[1].Slot.Equal(want0.AddDate(0, 0, 1)) {
		t.Fatalf("slots %v %v", runs[0].Slot, runs[1].Slot)
	}
	if runs[0].Trigger != journal.TriggerSchedule || runs[1].Trigger != journal.TriggerSchedule || runs[0].Epoch != 1 || runs[0].LateBy != 0 {
		t.Fatalf("run: %+v", runs[0])
	}
	env := strings.Join(h.act.runs()[0].Env, "\n")
	for _, w := range []string{"ROUTINELY_ROUTINE=daily", "ROUTINELY_SLOT=2026-06-01T09:00:00+02:00",
		"ROUTINELY_RUN_ID=1", "ROUTINELY_EPOCH=1", "ROUTINELY_TRIGGER=schedule"} {
		if !strings.Contains(env, w) {
			t.Errorf("env lacks %s:\n%s", w, env)
		}
	}
	eventually(t, "NoteTick after each run", func() bool { return h.gate.ticks.Load() >= 2 })
}

// A daily 09:00 routine with the machine asleep Mon 20:00 → Wed 10:00 runs exactly
// once on wake (late-by 1 h, Tue recorded missed).
func TestSleepMondayToWednesdayRunsOnceOnWake(t *testing.T) {
	mon := time.Date(2026, 6, 1, 8, 0, 0, 0, berlin) // a Monday
	h := newHarness(t, `[[routine]]
name = "daily"
at = ["09:00"]
timezone = "Europe/Berlin"
run = ["/bin/true"]
`, mon)
	h.start()
	h.advance(12*time.Hour, time.Hour) // Mon 20:00; Monday's run done
	eventually(t, "monday run", func() bool { return len(h.act.runs()) == 1 })

	// Asleep: wall time moves 38 h, monotonic time does not. The fake gocron clock jumps in one
	// step (its timer fires once, late), and the wake watcher sees wall ≠ monotonic.
	h.clock.Advance(38 * time.Hour) // Wed 10:00
	h.wake.move(38*time.Hour, 0)
	h.wake.tick(t)
	h.wake.tick(t) // the watcher handled the first tick
	h.settle()
	eventually(t, "catch-up run", func() bool { return len(h.act.runs()) == 2 })
	h.advance(time.Hour, 10*time.Minute)

	runs := runsOf(t, h.j, "daily")
	if len(runs) != 3 {
		t.Fatalf("want Mon success, Tue missed, Wed catch-up; got %+v", runs)
	}
	tue, wed := runs[1], runs[2]
	if tue.Outcome != journal.OutcomeMissed || !tue.Slot.Equal(mon.Add(25*time.Hour)) {
		t.Fatalf("tuesday: %+v", tue)
	}
	if wed.Outcome != journal.OutcomeSuccess || wed.Trigger != journal.TriggerCatchUp || !wed.Slot.Equal(mon.Add(49*time.Hour)) || wed.LateBy != time.Hour {
		t.Fatalf("wednesday: %+v", wed)
	}
	if len(h.act.runs()) != 2 {
		t.Fatalf("ran %d times, want 2", len(h.act.runs()))
	}
}

func TestWakeRearmDoesNotCancelRunInFlight(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 59, 50, 0, berlin)
	h := newHarness(t, `[[routine]]
name = "long"
at = ["09:00"]
timezone = "Europe/Berlin"
timeout = "1h"
run = ["/bin/true"]
`, start)
	h.act.block = make(chan struct{})
	h.start()
	h.advance(20*time.Second, 5*time.Second)
	eventually(t, "run started", func() bool { return len(h.act.runs()) == 1 })
	h.wake.move(time.Hour, 0)
	h.wake.tick(t)
	h.wake.tick(t)
	close(h.act.block)
	eventually(t, "run recorded", func() bool {
		r := runsOf(t, h.j, "long")
		return len(r) == 1 && r[0].Outcome == journal.OutcomeSuccess
	})
}

func TestClaimFencingAndUniqueness(t *testing.T) {
	h := newHarness(t, "", time.Now())
	slot := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	if _, err := h.j.Claim(journal.Claim{Routine: "a", Slot: slot, Trigger: journal.TriggerSchedule, Outcome: journal.OutcomeRunning}); !errors.Is(err, journal.ErrFenced) {
		t.Fatalf("claim before Acquire: %v, want ErrFenced", err)
	}
	if _, err := h.j.Acquire(1, time.Now()); err != nil {
		t.Fatal(err)
	}
	id, err := h.j.Claim(journal.Claim{Routine: "a", Slot: slot, Trigger: journal.TriggerSchedule, Outcome: journal.OutcomeRunning})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.j.Claim(journal.Claim{Routine: "a", Slot: slot, Trigger: journal.TriggerCatchUp, Outcome: journal.OutcomeRunning}); !errors.Is(err, journal.ErrSlotClaimed) {
		t.Fatalf("second claim: %v, want ErrSlotClaimed", err)
	}
	if _, err := h.j.Claim(journal.Claim{Routine: "a", Slot: slot.Add(-time.Hour), Trigger: journal.TriggerSchedule, Outcome: journal.OutcomeRunning}); !errors.Is(err, journal.ErrSlotClaimed) {
		t.Fatalf("claim behind the high-water mark: %v, want ErrSlotClaimed", err)
	}
	// A second process acquires epoch 2 on the same file: the first is fenced.
	j2, err := journal.Open(filepath.Join(h.dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	n, err := j2.Acquire(2, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("acquire 2: interrupted %d, err %v", n, err)
	}
	if err := h.j.Finish(id, journal.Result{Outcome: journal.OutcomeSuccess, Finished: time.Now()}); !errors.Is(err, journal.ErrFenced) {
		t.Fatalf("finish by old epoch: %v, want ErrFenced", err)
	}
	if _, err := h.j.Claim(journal.Claim{Routine: "a", Slot: slot.Add(time.Hour), Trigger: journal.TriggerSchedule, Outcome: journal.OutcomeRunning}); !errors.Is(err, journal.ErrFenced) {
		t.Fatalf("claim by old epoch: %v, want ErrFenced", err)
	}
	if _, err := h.j.Arm(map[string]time.Duration{"a": time.Minute}, time.Now()); !errors.Is(err, journal.ErrFenced) {
		t.Fatalf("arming (grid anchors) by old epoch: %v, want ErrFenced", err)
	}
	if _, err := h.j.Acquire(1, time.Now()); !errors.Is(err, journal.ErrFenced) {
		t.Fatalf("acquire older epoch: %v, want ErrFenced", err)
	}
	// The run epoch 1 left running stays so until the new owner has ended its processes
	// (orphans.go); it is then recorded interrupted.
	if o, err := j2.Orphans(); err != nil || len(o) != 1 || o[0].ID != id || o[0].Epoch != 1 {
		t.Fatalf("orphans after acquire 2: %+v, %v", o, err)
	}
	if err := j2.CloseOrphan(id, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if r, _ := j2.Run(id); r.Outcome != journal.OutcomeInterrupted {
		t.Fatalf("run left running by epoch 1 is %q, want interrupted", r.Outcome)
	}
	if e, _ := j2.MaxEpoch(); e != 2 {
		t.Fatalf("max epoch %d", e)
	}
}

// Engine.Routines (the UI and CLI poll it) runs while config reloads re-arm routines and runs
// start: neither may touch a routine another goroutine reads without the engine's lock (-race).
func TestRoutinesWhileReloadingAndRunningIsRaceFree(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n\n[[routine]]\nname = \"b\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = h.e.Routines()
				h.e.Reload()
			}
		}()
	}
	h.settle()
	for range 5 {
		// Under load gocron may call the engine for a fired timer only after settle saw the
		// engine idle; an Advance then would make that slot late (this test is about races
		// between Routines, Reload and runs, not about late timers), so wait for it.
		h.clock.Advance(time.Minute)
		eventually(t, "the minute's slots handed to the engine", h.dueHandled)
		h.settle()
	}
	close(stop)
	wg.Wait()
	h.settle()
	if n := countOutcome(runsOf(t, h.j, "a"), journal.OutcomeSuccess); n != 5 {
		t.Fatalf("a ran %d times, want 5: %+v", n, runsOf(t, h.j, "a"))
	}
}

// A timer that fires a little before its slot by the wall clock (NTP stepped the clock back,
// a coarse timer) still runs that slot, at its instant, instead of dropping it as already
// handled and recording it missed at the next slot.
func TestTimerFiringEarlyRunsItsSlot(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, berlin)
	h := newHarness(t, "[[routine]]\nname = \"daily\"\nat = [\"09:00\"]\ntimezone = \"Europe/Berlin\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.settle()
	h.clock.Advance(time.Hour - 100*time.Millisecond) // 08:59:59.900, before the timer
	h.settle()
	// The routine's only timer is one that fires 100 ms early by the wall clock.
	h.e.mu.Lock()
	h.e.disarmLocked(h.e.routines["daily"])
	h.e.mu.Unlock()
	done := make(chan struct{})
	go func() { h.e.fire("daily"); close(done) }()
	eventually(t, "the early timer to wait for its slot or return", func() bool {
		select {
		case <-done:
			return true
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		return h.clock.BlockUntilContext(ctx, 1) == nil
	})
	h.clock.Advance(100 * time.Millisecond) // 09:00
	<-done
	// idle: the action returned and its end is recorded (runs() alone races the Finish).
	eventually(t, "the 09:00 run", func() bool { return len(h.act.runs()) == 1 && h.e.idle() })
	runs := runsOf(t, h.j, "daily")
	if len(runs) != 1 || runs[0].Outcome != journal.OutcomeSuccess || !runs[0].Slot.Equal(start.Add(time.Hour)) ||
		runs[0].Trigger != journal.TriggerSchedule || runs[0].Started.Before(runs[0].Slot) {
		t.Fatalf("runs: %+v", runs)
	}
}

// A paused routine shows no next run: its slots will be recorded skipped, not run.
func TestPausedRoutineShowsNoNext(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n\n[[routine]]\nname = \"b\"\nevery = \"1m\"\npaused = true\nrun = [\"/bin/true\"]\n", start)
	h.start()
	if err := h.j.SetPaused("a", "holiday", nil); err != nil {
		t.Fatal(err)
	}
	for _, st := range h.e.Routines() {
		if !st.Paused || st.Next != nil {
			t.Fatalf("paused routine %s: paused %v next %v", st.Name, st.Paused, st.Next)
		}
	}
	// Paused until 08:03: the next run is the 08:03 slot (a slot at the pause's end runs).
	until := start.Add(3 * time.Minute)
	if err := h.j.SetPaused("a", "", &until); err != nil {
		t.Fatal(err)
	}
	for _, st := range h.e.Routines() {
		if st.Name == "a" && (!st.Paused || st.Next == nil || !st.Next.Equal(until)) {
			t.Fatalf("routine paused until %v: %+v", until, st)
		}
	}
	if err := h.j.Resume("a"); err != nil {
		t.Fatal(err)
	}
	for _, st := range h.e.Routines() {
		if st.Name == "a" && (st.Paused || st.Next == nil || !st.Next.Equal(start.Add(time.Minute))) {
			t.Fatalf("resumed routine: %+v", st)
		}
	}
}

// The daemon says something per run: one info line for each finished run, a warning for a
// failed one.
func TestEachRunLogsOneLine(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"flaky\"\nevery = \"1m\"\nauto_pause_after = 0\nrun = [\"/bin/true\"]\n", start)
	h.act.result = func(n int) action.Result {
		if n == 2 {
			return action.Result{Outcome: journal.OutcomeFailed, Attempts: 1, Summary: "exit 1"}
		}
		return action.Result{Outcome: journal.OutcomeSuccess, Attempts: 1}
	}
	var buf syncbuf.Buffer
	h.logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h.start()
	h.stepMinute()
	h.stepMinute()
	eventually(t, "two runs", func() bool { return len(runsOf(t, h.j, "flaky")) == 2 })
	var info, warn []string
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.Contains(line, "routine=flaky") {
			continue
		}
		switch {
		case strings.Contains(line, "level=INFO") && strings.Contains(line, "outcome=success"):
			info = append(info, line)
		case strings.Contains(line, "level=WARN") && strings.Contains(line, "outcome=failed"):
			warn = append(warn, line)
		}
	}
	if len(info) != 1 || len(warn) != 1 || !strings.Contains(info[0], "slot=2026-06-01T08:01:00Z") || !strings.Contains(info[0], "duration=") {
		t.Fatalf("run log lines:\n%s", buf.String())
	}
}
