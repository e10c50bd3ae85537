//go:build linux

package main

import "time"

// RunNow times `routinely run NAME` against a running owner, launch to exit: the request goes
// through the journal, the owner picks it up (it polls requests every second), runs /bin/true
// and records the outcome, which the command waits for.
func RunNow(bin, root string, trials int) Figure {
	f := Figure{Name: "run now: `routinely run` → run recorded", Unit: "ms", Goal: "p99 ≤ 1 s",
		Met: func(f Figure) bool { return f.Value.P99 <= 1000 }, Note: "includes /bin/true"}
	h, err := NewHome(bin, root, "runnow", hourly(1))
	if err != nil {
		return f.failed(err)
	}
	defer h.Close()
	if _, err := h.StartOwner(); err != nil {
		return f.failed(err)
	}
	var ms []float64
	for i := 0; i < trials; i++ {
		time.Sleep(time.Duration(i%4) * 250 * time.Millisecond) // spread over the owner's poll phase
		d, err := h.TimeCommand("run", routineName(idlePrefix, 0))
		if err != nil {
			return f.failed(err)
		}
		ms = append(ms, d)
	}
	f.Value = Summarize(ms)
	return f
}
