//go:build linux

package main

import (
	"fmt"
	"time"
)

// Recovery measures SIGKILL of the owner → a standing-by daemon owns, with the real binary.
// Trials chain: the standby that took over becomes the next trial's owner.
func Recovery(bin, root string, trials int) Figure {
	f := Figure{Name: "crash recovery, SIGKILL → standby owns", Unit: "ms", Goal: "p99 ≤ 60 ms, ratio ≤ 1.2",
		Met: func(f Figure) bool { return f.Value.P99 <= 60 && f.Ratio() <= 1.2 }}
	h, err := NewHome(bin, root, "recovery", hourly(1))
	if err != nil {
		return f.failed(err)
	}
	defer h.Close()
	owner, err := h.StartOwner()
	if err != nil {
		return f.failed(err)
	}
	var ms []float64
	allLog := true
	for i := 0; i < trials; i++ {
		standby, err := h.Daemon("--wait")
		if err == nil {
			err = WaitLog(standby, "Standing by", 10*time.Second)
		}
		if err != nil {
			return f.failed(err)
		}
		settle() // into its poll loop, at a random phase of it
		t0 := monoNow()
		owner.Kill()
		at, fromLog, err := h.WaitOwner(standby, 5*time.Second)
		if err != nil {
			return f.failed(fmt.Errorf("trial %d: %w", i+1, err))
		}
		allLog = allLog && fromLog
		ms = append(ms, float64(at-t0)/1e6)
		owner.WaitExit(time.Second)
		owner = standby
	}
	f.Value = Summarize(ms)
	if !allLog {
		f.Note = "owned = owner.json names it; the daemon logs no ownership mono_ns line"
	}
	base, err := flockBaseline(root, trials)
	if err != nil {
		return f.failed(fmt.Errorf("baseline: %w", err))
	}
	f.Baseline = &base
	return f
}
