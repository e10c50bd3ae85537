//go:build linux

package main

import (
	"fmt"
	"time"
)

// Takeover measures `daemon --takeover` against an idle owner with policy allow, from launching
// the challenger (so process start is included) to the challenger owning. Trials chain.
func Takeover(bin, root string, trials int) Figure {
	f := Figure{Name: "cooperative takeover, idle owner, policy allow", Unit: "ms", Goal: "median ≤ 300 ms",
		Met: func(f Figure) bool { return f.Value.Median <= 300 }, Note: "from launching `daemon --takeover`"}
	h, err := NewHome(bin, root, "takeover", hourly(1))
	if err != nil {
		return f.failed(err)
	}
	defer h.Close()
	owner, err := h.StartOwner("--on-takeover", "allow")
	if err != nil {
		return f.failed(err)
	}
	var ms []float64
	for i := 0; i < trials; i++ {
		time.Sleep(300 * time.Millisecond) // let the owner settle into idle
		t0 := monoNow()
		challenger, err := h.Daemon("--takeover", "--timeout", "20s", "--on-takeover", "allow")
		if err != nil {
			return f.failed(err)
		}
		at, _, err := h.WaitOwner(challenger, 20*time.Second)
		if err != nil {
			return f.failed(fmt.Errorf("trial %d: %w", i+1, err))
		}
		ms = append(ms, float64(at-t0)/1e6)
		if !owner.WaitExit(10 * time.Second) {
			return f.failed(fmt.Errorf("trial %d: the old owner (pid %d) did not exit after handing over", i+1, owner.PID()))
		}
		owner = challenger
	}
	f.Value = Summarize(ms)
	return f
}
