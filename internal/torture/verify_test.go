//go:build linux

package torture

import (
	"os"
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

// Two runs of a routine whose own stamps overlap — a run a dead owner left behind still going
// when the next owner starts the routine — fail the overlap check; back-to-back runs do not.
func TestOverlappingRunLifetimesAreReported(t *testing.T) {
	s := int64(time.Second)
	slot := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	life := func(routine string, epoch uint64, n int, start, end int64) Lifetime {
		return Lifetime{Routine: routine, Slot: slot.Add(time.Duration(n) * 2 * time.Second), Epoch: epoch, ShellPID: 100 + n, Start: start, End: end}
	}
	clean := []Lifetime{
		life("long-4s", 3, 0, 10*s, 14*s),
		life("long-4s", 4, 1, 14*s, 18*s), // starts in the tick the previous one ended: not an overlap
		life("long-4s", 4, 2, 19*s, 23*s),
		life("tick-1s", 4, 3, 11*s, 11*s+ms), // another routine may run meanwhile
	}
	if c := checkNoOverlap(Evidence{Lifetimes: clean}); len(c.Violations) != 0 {
		t.Fatalf("back-to-back runs reported: %v", c.Violations)
	}
	cases := map[string][]Lifetime{
		"across owners": {life("long-4s", 3, 0, 10*s, 18*s), life("long-4s", 4, 1, 12*s, 16*s)},
		"no end stamp":  {life("long-4s", 3, 0, 10*s, 0), life("long-4s", 4, 1, 30*s, 34*s)},
		"behind a short one": {life("long-4s", 3, 0, 10*s, 20*s), life("long-4s", 4, 1, 11*s, 12*s),
			life("long-4s", 4, 2, 15*s, 16*s)},
	}
	for name, lives := range cases {
		c := checkNoOverlap(Evidence{Lifetimes: lives})
		want := len(lives) - 1
		if len(c.Violations) != want || !strings.Contains(c.Violations[0], "started at") {
			t.Errorf("%s: violations %v, want %d", name, c.Violations, want)
		}
	}
	// Through Verify, as the chaos run reports it.
	clock := NewClock()
	base := time.Now().Truncate(time.Second)
	start := clock.ToMono(base.Add(-10 * time.Second))
	ev := Evidence{Procs: []ProcRecord{{ID: 1, PID: 50, StartMono: start - ms, EndMono: start + 30*s}},
		Events: map[int][]OwnEvent{1: {{Acquired: true, Epoch: 4, Mono: start}, {Epoch: 4, Mono: start + 20*s}}},
		Clock:  clock, CalmMono: start + 10*s, EndMono: start + 20*s, Lifetimes: cases["across owners"]}
	expectViolation(t, ev, "no two runs of a routine overlap", "long-4s@08:00:02.000 (epoch 4, pid 101) started at uptime 12.00s")
}

func TestReadStamps(t *testing.T) {
	path := t.TempDir() + "/stamps.log"
	data := strings.Join([]string{
		"start long-4s 2026-06-01T08:00:00Z 3 100 10.00",
		"end tick-1s 2026-06-01T08:00:01Z 3 101 10.50", // SIGTERM before its start stamp: ignored
		"end long-4s 2026-06-01T08:00:00Z 3 100 14.25",
		"end long-4s 2026-06-01T08:00:00Z 3 100 14.30", // the trap after the normal end
		"start long-4s 2026-06-01T08:00:02Z 4 102 15.00",
		"start long-4s 2026-06-01T08:00:04Z 4",
	}, "\n") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	lives, problems, err := ReadStamps(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lives) != 2 || lives[0].Start != 10*int64(time.Second) || lives[0].End != 14250*ms || lives[0].Epoch != 3 ||
		lives[1].ShellPID != 102 || lives[1].End != 0 {
		t.Fatalf("lifetimes %+v", lives)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "stamps.log:6") {
		t.Fatalf("problems %v", problems)
	}
}
