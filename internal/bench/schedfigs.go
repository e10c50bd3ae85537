//go:build linux

package main

import (
	"fmt"
	"time"
)

// Baseline metrics carry one of these words in their unit.
var baselineWords = []string{"gocron", "bare", "raw", "baseline"}

// FireLatenessInProcess reads the scheduler's own 100-routines-every-second benchmark (engine
// in-process, its own task) and its bare-gocron baseline, when the scheduler has one.
func FireLatenessInProcess(window time.Duration) Figure {
	f := Figure{Name: fmt.Sprintf("fire lateness, 100 routines every 1 s for %v, in-process engine", window), Unit: "ms", Goal: "p99 ≤ 10 ms, ratio ≤ 1.5",
		Met: func(f Figure) bool { return f.Value.P99 <= 10 && f.Ratio() <= 1.5 }, Note: "scheduler benchmark, no-op action"}
	runs, err := goBench("scheduler", "FireLateness", "1x", 1, "ROUTINELY_BENCH_WINDOW="+window.String())
	if err != nil {
		return f.failed(err)
	}
	f.Value, f.Err = quantiles(runs, nil, baselineWords)
	if n, _, err := runs.series([]string{"runs"}, nil, 1); err == nil {
		f.Value.N = int(n[0]) // samples behind the quantiles
	}
	if f.Err == nil {
		var b Stat
		b, f.Err = quantiles(runs, []string{"gocron"}, nil)
		f.Baseline = &b
	}
	return f
}

// quantiles builds a Stat from a benchmark's "p50…" (or "median…") and "p99…" millisecond
// metrics, taking the median of each across -count runs.
func quantiles(runs benchRuns, want, avoid []string) (Stat, error) {
	p50, _, err := runs.series(append([]string{"p50", "ms"}, want...), avoid, 1)
	if err != nil {
		if p50, _, err = runs.series(append([]string{"median", "ms"}, want...), avoid, 1); err != nil {
			return Stat{}, err
		}
	}
	p99, _, err := runs.series(append([]string{"p99", "ms"}, want...), avoid, 1)
	if err != nil {
		return Stat{}, err
	}
	return Stat{N: len(p50), Median: Summarize(p50).Median, P99: Summarize(p99).Median}, nil
}

// JournalClaims reads the journal's claim-throughput benchmark and its raw-insert baseline.
func JournalClaims(quick bool) Figure {
	f := Figure{Name: "journal claims per second", Unit: "/s", Goal: "≥ 2,000/s",
		Met: func(f Figure) bool { return f.Value.Median >= 2000 }}
	count := 5
	if quick {
		count = 2
	}
	runs, err := goBench("scheduler/journal", "Claims", "1s", count)
	if err != nil {
		return f.failed(err)
	}
	xs, _, err := runs.series([]string{"claims/s"}, nil, 1)
	if err != nil {
		return f.failed(err)
	}
	f.Value = Summarize(xs)
	if base, _, err := runs.series([]string{"inserts/s"}, nil, 1); err == nil {
		b := Summarize(base)
		f.Baseline = &b
	}
	return f
}

// LoadArm reads the scheduler's 10,000-routines benchmark: time to load and arm, and RSS.
func LoadArm(quick bool) (Figure, Figure) {
	t := Figure{Name: "load + arm 10,000 routines: time", Unit: "s", Goal: "≤ 2 s", Met: func(f Figure) bool { return f.Value.P99 <= 2 }}
	m := Figure{Name: "load + arm 10,000 routines: RSS", Unit: "MB", Goal: "≤ 150 MB", Met: func(f Figure) bool { return f.Value.P99 <= 150 }}
	count := 3
	if quick {
		count = 1
	}
	runs, err := goBench("scheduler", "LoadAndArm10k", "1x", count)
	if err != nil {
		t.Err, m.Err = err, err
		return t, m
	}
	secs, _, err := runs.series([]string{"ns/op"}, nil, 1e-9)
	if err != nil {
		t.Err = err
	} else {
		t.Value = Summarize(secs)
	}
	mb, _, err := runs.series([]string{"MB"}, nil, 1)
	if err != nil {
		m.Err = fmt.Errorf("no RSS metric: %w", err)
	} else {
		m.Value = Summarize(mb)
	}
	return t, m
}

// Heartbeat reads the ownership package's heartbeat benchmark (goal: ≤ 1 ms median).
func Heartbeat() Figure {
	f := Figure{Name: "heartbeat tick (guard check, record rewrite, request check)", Unit: "ms", Goal: "median ≤ 1 ms",
		Met: func(f Figure) bool { return f.Value.Median <= 1 }, Note: "ownership package benchmark"}
	runs, err := goBench("ownership", "Heartbeat", "200x", 1)
	if err == nil {
		f.Value, err = quantiles(runs, nil, baselineWords)
		f.Value.N = 200
	}
	f.Err = err
	return f
}
