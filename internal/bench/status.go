//go:build linux

package main

import (
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
		return f.failed(err)
	}
	defer h.Close()
	if err := h.withHistory(50, 10000); err != nil {
		return f.failed(err)
	}
	if _, err := h.StartOwner(); err != nil {
		return f.failed(err)
	}
	var ms []float64
	for i := 0; i < trials; i++ {
		d, err := h.TimeCommand("status", "--json")
		if err != nil {
			return f.failed(err)
		}
		ms = append(ms, d)
	}
	f.Value = Summarize(ms)
	return f
}

// withHistory lets a first daemon create the journal, stops it, and seeds n past runs spread
// over the home's first `routines` routines (named as hourly names them). The error is the
// daemon's (did not own, did not exit within 10 s of SIGTERM) or seedHistory's.
func (h *Home) withHistory(routines, n int) error {
	d, err := h.StartOwner()
	if err != nil {
		return err
	}
	if err := StopDaemon(d, 10*time.Second); err != nil {
		return err
	}
	names := make([]string, routines)
	for i := range names {
		names[i] = routineName(idlePrefix, i)
	}
	return seedHistory(filepath.Join(h.State, "journal.db"), names, n)
}
