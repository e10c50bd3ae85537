//go:build linux

package main

import (
	"fmt"
	"time"
)

// Idle runs a daemon owning 100 hourly routines (none due) for window and samples its resident
// memory every second and its CPU use per 5 s slice. It returns the RSS and CPU figures.
func Idle(bin, root string, window time.Duration) (rss, cpu Figure) {
	name := fmt.Sprintf("daemon idle, 100 hourly routines, %v", window)
	rss = Figure{Name: name + ": RSS", Unit: "MB", Goal: "≤ 30 MB", Met: func(f Figure) bool { return f.Value.P99 <= 30 }}
	cpu = Figure{Name: name + ": CPU", Unit: "%", Goal: "≤ 0.2 % (mean)", Met: func(f Figure) bool { return f.Value.Mean <= 0.2 }}
	fail := func(err error) (Figure, Figure) {
		rss.Err, cpu.Err = err, err
		return rss, cpu
	}
	h, err := NewHome(bin, root, "idle", hourly(100))
	if err != nil {
		return fail(err)
	}
	defer h.Close()
	d, err := h.Daemon()
	if err == nil {
		_, _, err = h.WaitOwner(d, 10*time.Second)
	}
	if err != nil {
		return fail(err)
	}
	time.Sleep(3 * time.Second) // past start-up (config load, journal open, first heartbeat)
	const slice = 5 * time.Second
	var mem, load []float64
	start := time.Now()
	prevT, prevCPU := start, int64(0)
	if prevCPU, err = cpuNS(d.PID()); err != nil {
		return fail(err)
	}
	for time.Since(start) < window {
		time.Sleep(time.Second)
		if !d.Alive() {
			return fail(fmt.Errorf("daemon exited: %s", tail(d.LogPath)))
		}
		m, err := rssMB(d.PID())
		if err != nil {
			return fail(err)
		}
		mem = append(mem, m)
		if now := time.Now(); now.Sub(prevT) >= slice || time.Since(start) >= window {
			c, err := cpuNS(d.PID())
			if err != nil {
				return fail(err)
			}
			load = append(load, 100*float64(c-prevCPU)/float64(now.Sub(prevT)))
			prevT, prevCPU = now, c
		}
	}
	rss.Value, cpu.Value = Summarize(mem), Summarize(load)
	cpu.Note = fmt.Sprintf("mean %.3f %%, per %v slice", cpu.Value.Mean, slice)
	return rss, cpu
}
