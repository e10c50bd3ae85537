//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"time"
)

// StatusLatency times `routinely status --json`, launch to exit, against a running owner of 50
// routines whose journal holds 10,000 past runs.
func StatusLatency(bin, root string, trials int) Figure {
	f := Figure{Name: "`status --json` latency, 50 routines, 10,000 runs", Unit: "ms", Goal: "p99 ≤ 50 ms",
		Met: func(f Figure) bool { return f.Value.P99 <= 50 }}
	h, err := NewHome(bin, root, "status", hourly(50))
	if err != nil {
		f.Err = err
		return f
	}
	defer h.Close()
	if err := h.withHistory(50, 10000); err != nil {
		f.Err = err
		return f
	}
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

// withHistory lets a first daemon create the journal, stops it, and seeds n past runs of the
// home's n routines (named as hourly names them).
func (h *Home) withHistory(routines, n int) error {
	d, err := h.Daemon()
	if err == nil {
		_, _, err = h.WaitOwner(d, 10*time.Second)
	}
	if err != nil {
		return err
	}
	d.Term()
	if !d.WaitExit(10 * time.Second) {
		return fmt.Errorf("daemon pid %d did not exit after SIGTERM", d.PID())
	}
	names := make([]string, routines)
	for i := range names {
		names[i] = fmt.Sprintf("idle-%03d", i)
	}
	return seedHistory(filepath.Join(h.State, "journal.db"), names, n)
}
