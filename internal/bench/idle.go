//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Idle runs a daemon owning 100 hourly routines (none due) for window and samples its resident
// memory every second, its CPU use per 5 s slice, and what it wrote (/proc/PID/io) over the
// window. It returns the RSS, CPU and write figures; the last is the bytes the daemon sent to
// the disk (write_bytes) per heartbeat, met when its write(2) bytes per heartbeat (wchar) are
// at most one owner.json rewrite (the record's size, plus 64 bytes for the runtime's wake-ups).
func Idle(bin, root string, window time.Duration) (rss, cpu, writes Figure) {
	name := fmt.Sprintf("daemon idle, 100 hourly routines, %v", window)
	rss = Figure{Name: name + ": RSS", Unit: "MB", Goal: "≤ 30 MB", Met: func(f Figure) bool { return f.Value.P99 <= 30 }}
	cpu = Figure{Name: name + ": CPU", Unit: "%", Goal: "≤ 0.1 % (mean)", Met: func(f Figure) bool { return f.Value.Mean <= 0.1 }}
	writes = Figure{Name: name + ": disk writes per heartbeat (write_bytes)", Unit: "kB", Goal: "one owner.json rewrite per heartbeat"}
	fail := func(err error) (Figure, Figure, Figure) {
		rss.Err, cpu.Err, writes.Err = err, err, err
		return rss, cpu, writes
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
	io0, err := procIO(d.PID())
	if err != nil {
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
	io1, err := procIO(d.PID())
	if err != nil {
		return fail(err)
	}
	rss.Value, cpu.Value = Summarize(mem), Summarize(load)
	cpu.Note = fmt.Sprintf("mean %.3f %%, per %v slice", cpu.Value.Mean, slice)
	beats := time.Since(start).Seconds() / 2 // the default heartbeat, 2 s
	perBeat := float64(io1["write_bytes"]-io0["write_bytes"]) / 1e3 / beats
	wchar := float64(io1["wchar"]-io0["wchar"]) / beats
	recSize := 0.0
	if fi, err := os.Stat(filepath.Join(h.State, "owner.json")); err == nil {
		recSize = float64(fi.Size())
	}
	writes.Value = Stat{N: 1, Median: perBeat, P99: perBeat, Mean: perBeat}
	writes.Met = func(Figure) bool { return recSize > 0 && wchar <= recSize+64 }
	writes.Note = fmt.Sprintf("write(2) %.0f bytes per heartbeat, owner.json is %.0f bytes; %.1f write calls per heartbeat",
		wchar, recSize, float64(io1["syscw"]-io0["syscw"])/beats)
	return rss, cpu, writes
}
