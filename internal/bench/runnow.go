//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"time"
)

// RunNow times `routinely run NAME` against a running owner, launch to exit: the request goes
// through the journal, the owner picks it up (it polls requests every second), runs /bin/true
// and records the outcome, which the command waits for.
func RunNow(bin, root string, trials int) Figure {
	f := Figure{Name: "run now: `routinely run` → run recorded", Unit: "ms", Goal: "p99 ≤ 1 s",
		Met: func(f Figure) bool { return f.Value.P99 <= 1000 }, Note: "includes /bin/true"}
	h, err := NewHome(bin, root, "runnow", hourly(1))
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
		time.Sleep(time.Duration(i%4) * 250 * time.Millisecond) // spread over the owner's poll phase
		start := time.Now()
		out, err := exec.Command(bin, "--home", h.State, "run", "idle-000").CombinedOutput()
		d := time.Since(start)
		if err != nil {
			f.Err = fmt.Errorf("run idle-000: %v: %s", err, out)
			return f
		}
		ms = append(ms, float64(d)/1e6)
	}
	f.Value = Summarize(ms)
	return f
}
