//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"time"
)

// StatusLatency runs `routinely status --json` against a running owner and times each call
// from launch to exit.
func StatusLatency(bin, root string, trials int) Figure {
	f := Figure{Name: "`status --json` latency, 10 routines", Unit: "ms", Goal: "p99 ≤ 50 ms",
		Met: func(f Figure) bool { return f.Value.P99 <= 50 }}
	h, err := NewHome(bin, root, "status", hourly(10))
	if err != nil {
		f.Err = err
		return f
	}
	defer h.Close()
	owner, err := h.Daemon()
	if err == nil {
		_, _, err = h.WaitOwner(owner, 10*time.Second)
	}
	if err != nil {
		f.Err = err
		return f
	}
	var ms []float64
	for i := 0; i < trials; i++ {
		start := time.Now()
		out, err := exec.Command(bin, "--home", h.State, "status", "--json").CombinedOutput()
		d := time.Since(start)
		if err != nil {
			f.Err = fmt.Errorf("status --json: %v: %s", err, out)
			return f
		}
		ms = append(ms, float64(d)/1e6)
	}
	f.Value = Summarize(ms)
	return f
}
