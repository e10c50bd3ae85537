//go:build linux

package torture

import (
	"strings"
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

// The checks must fail on the failures they exist to catch: these feed them made-up evidence.

func TestOverlapsAndGaps(t *testing.T) {
	procs := []ProcRecord{
		{ID: 1, PID: 101, StartMono: 0, KilledMono: 1000 * ms, EndMono: 1001 * ms},
		{ID: 2, PID: 102, StartMono: 0, EndMono: 5000 * ms},
	}
	events := map[int][]OwnEvent{
		1: {{Acquired: true, Epoch: 1, Mono: 10 * ms}},
		2: {{Acquired: true, Epoch: 2, Mono: 2500 * ms}, {Epoch: 2, Mono: 4000 * ms}},
	}
	iv, problems := BuildIntervals(procs, events, 5000*ms)
	if len(problems) != 0 || len(iv) != 2 || iv[0].End != 1000*ms || iv[0].EndedBy != "killed" {
		t.Fatalf("intervals %+v problems %v", iv, problems)
	}
	if o := Overlaps(iv); len(o) != 0 {
		t.Fatalf("disjoint intervals reported as overlapping: %v", o)
	}
	gap, _ := LongestGap(iv, procs, nil, 10*ms, 5000*ms)
	if gap != 1500*ms { // 1.0 s → 2.5 s nobody owned while pid 102 was alive
		t.Fatalf("gap %d ms, want 1500", gap/ms)
	}
	gap, _ = LongestGap(iv, procs, []Window{{PID: 101, Start: 900 * ms, End: 2000 * ms}}, 10*ms, 5000*ms)
	if gap != 1000*ms { // the stop window hides 1.0–2.0 s; 4.0 → 5.0 s remains
		t.Fatalf("gap with stop window %d ms, want 1000", gap/ms)
	}
	events[2][0].Mono = 900 * ms // the standby claims to own before the killed owner was killed
	iv, _ = BuildIntervals(procs, events, 5000*ms)
	if o := Overlaps(iv); len(o) != 1 {
		t.Fatalf("overlap not detected: %v", o)
	}
}

func TestExitWithoutReleaseIsReported(t *testing.T) {
	procs := []ProcRecord{{ID: 1, PID: 7, EndMono: 50 * ms}}
	_, problems := BuildIntervals(procs, map[int][]OwnEvent{1: {{Acquired: true, Epoch: 3, Mono: ms}}}, 60*ms)
	if len(problems) != 1 {
		t.Fatalf("problems %v", problems)
	}
}

func TestSlotChecks(t *testing.T) {
	clock := NewClock()
	base := time.Now().Truncate(time.Second)
	start := clock.ToMono(base.Add(-10 * time.Second))
	procs := []ProcRecord{{ID: 1, PID: 50, StartMono: start - ms, EndMono: start + 30*int64(time.Second)}}
	events := map[int][]OwnEvent{1: {{Acquired: true, Epoch: 4, Mono: start}, {Epoch: 4, Mono: start + 20*int64(time.Second)}}}
	var runs []JournalRun
	for _, rt := range Routines {
		step := rt.Every
		if step == 0 {
			step = time.Second
		}
		for s := base.Add(-9 * time.Second); s.Before(base.Add(9 * time.Second)); s = s.Add(step) {
			if rt.Every == 0 && s.Second() != rt.CronSecond {
				continue
			}
			runs = append(runs, JournalRun{Routine: rt.Name, Slot: s, Epoch: 4, Outcome: "success", Started: s})
		}
	}
	ev := Evidence{Procs: procs, Events: events, Runs: runs, Clock: clock,
		CalmMono: clock.ToMono(base.Add(9 * time.Second)), EndMono: clock.ToMono(base.Add(10 * time.Second)),
		Effects: []SideEffect{{Routine: "tick-1s", Slot: base, Epoch: 4, Line: 1, DaemonPID: 50}}}
	if r := Verify(ev); r.Failed() {
		t.Fatalf("clean evidence failed: %s", summary(r))
	}

	dup := ev
	dup.Effects = append(dup.Effects, SideEffect{Routine: "tick-1s", Slot: base, Epoch: 4, Line: 2})
	dup.Runs = append(append([]JournalRun(nil), runs...), JournalRun{Routine: "tick-3s", Slot: runs[len(runs)-1].Slot, Epoch: 4, Outcome: "failed"})
	expectViolation(t, dup, "no slot twice", "fired twice")

	lost := ev
	lost.Runs = nil
	for _, jr := range runs {
		if !(jr.Routine == "tick-1s" && jr.Slot.Equal(base)) {
			lost.Runs = append(lost.Runs, jr)
		}
	}
	expectViolation(t, lost, "no silent loss", "unaccounted")

	unclaimed := ev
	unclaimed.Effects = []SideEffect{{Routine: "tick-1s", Slot: base, Epoch: 3, Line: 1}}
	expectViolation(t, unclaimed, "no slot twice", "no claimed run")

	stale := ev
	stale.Runs = append(append([]JournalRun(nil), runs...), JournalRun{Routine: "tick-1s", Slot: base.Add(30 * time.Second), Epoch: 4, Outcome: "success", Started: base.Add(25 * time.Second)})
	expectViolation(t, stale, "epochs increase, runs fenced", "outside its owner's interval")

	foreign := ev
	foreign.Effects = []SideEffect{{Routine: "tick-1s", Slot: base, Epoch: 4, Line: 1, DaemonPID: 50}}
	foreign.Procs = append(append([]ProcRecord(nil), procs...), ProcRecord{ID: 2, PID: 60, StartMono: start, EndMono: start + 1})
	foreign.Events = map[int][]OwnEvent{1: events[1], 2: {{Acquired: true, Epoch: 5, Mono: start + 25*int64(time.Second)}}}
	foreign.Effects[0].DaemonPID = 60
	expectViolation(t, foreign, "epochs increase, runs fenced", "not that daemon's")
}

func expectViolation(t *testing.T, ev Evidence, check, text string) {
	t.Helper()
	r := Verify(ev)
	for _, c := range r.Checks {
		if c.Name != check {
			continue
		}
		for _, v := range c.Violations {
			if strings.Contains(v, text) {
				return
			}
		}
	}
	t.Errorf("check %q did not report %q:\n%s", check, text, summary(r))
}

func summary(r *Report) string {
	var b strings.Builder
	PrintSummary(&b, Options{}, r, nil, 0)
	return b.String()
}

func TestUndocumentedExitIsReported(t *testing.T) {
	c := checkExits(Evidence{Procs: []ProcRecord{
		{PID: 1, Args: []string{"daemon", "--wait"}, EndMono: 1, ExitCode: 0},
		{PID: 2, Args: []string{"daemon", "--takeover"}, EndMono: 1, ExitCode: 75},
		{PID: 3, Args: []string{"daemon", "--wait"}, EndMono: 2, KilledMono: 1, ExitCode: -1},
		{PID: 4, Args: []string{"daemon", "--wait"}, EndMono: 1, ExitCode: 75},
		{PID: 5, Args: []string{"daemon", "--wait"}, EndMono: 1, ExitCode: -1, Signal: "segmentation fault"},
	}})
	if len(c.Violations) != 2 || !strings.Contains(c.Violations[0], "pid 4") || !strings.Contains(c.Violations[1], "pid 5") {
		t.Fatalf("violations %v", c.Violations)
	}
	if !crashMarker.MatchString("time=x msg=ok\npanic: boom\n") || crashMarker.MatchString(`msg="recovered panic: boom"`) {
		t.Fatal("crash marker should match a runtime crash report only")
	}
}
