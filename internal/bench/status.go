//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/routinely/routinely/internal/torture"
)

// QuickLooks times `status --json`, `routines --json` and `history --limit 50`, launch to exit,
// against a running owner of 50 routines whose journal holds runs past runs, spread over 45 of
// them (5 routines have never run: the slowest case for a query without the right index). It
// returns the three figures, goal p99 ≤ goalMS; with retention set, a fourth: the journal's
// size before and after retention (Retention).
func QuickLooks(bin, root string, trials, runs int, goalMS float64, retention bool) []Figure {
	looks := [][]string{{"status", "--json"}, {"routines", "--json"}, {"history", "--limit", "50"}}
	figs := make([]Figure, len(looks))
	for i, args := range looks {
		figs[i] = Figure{Name: fmt.Sprintf("`%s` latency, 50 routines, %s runs", strings.Join(args, " "), thousands(runs)), Unit: "ms",
			Goal: fmt.Sprintf("p99 ≤ %.0f ms", goalMS), Met: func(f Figure) bool { return f.Value.P99 <= goalMS }}
	}
	fail := func(err error) []Figure {
		for i := range figs {
			figs[i] = figs[i].failed(err)
		}
		return figs
	}
	// keep_runs at its maximum: the owner's retention must not shrink the journal being measured.
	h, err := NewHome(bin, root, fmt.Sprintf("looks-%d", runs), strings.ReplaceAll(hourly(50), "every =", "keep_runs = 1000000\nevery ="))
	if err != nil {
		return fail(err)
	}
	defer h.Close()
	if err := h.withHistory(45, runs); err != nil {
		return fail(err)
	}
	owner, err := h.StartOwner()
	if err != nil {
		return fail(err)
	}
	ms := make([][]float64, len(looks))
	for t := 0; t < trials; t++ {
		for i, args := range looks { // interleaved, so each sees the same machine
			d, err := h.TimeCommand(args...)
			if err != nil {
				return fail(err)
			}
			ms[i] = append(ms[i], d)
		}
	}
	for i := range figs {
		figs[i].Value = Summarize(ms[i])
	}
	if retention {
		figs = append(figs, Retention(h, owner, runs))
	}
	return figs
}

// Retention stops owner, gives h's routines the default keep_runs (500), starts an owner again
// (retention runs at start) and waits until the journal's file stops shrinking. It returns the
// journal's size (journal.db with its -wal) after, in MB, with the size before in the note.
func Retention(h *Home, owner *torture.Proc, runs int) Figure {
	f := Figure{Name: fmt.Sprintf("journal file at %s runs, after retention (keep_runs 500, 45 routines)", thousands(runs)), Unit: "MB",
		Goal: "bounded by keep_runs", Met: func(f Figure) bool { return f.Value.Median < 50 }}
	if err := StopDaemon(owner, 10*time.Second); err != nil {
		return f.failed(err)
	}
	before := journalMB(h.State)
	if err := os.WriteFile(filepath.Join(h.State, "routines.toml"), []byte(hourly(50)), 0o600); err != nil {
		return f.failed(err)
	}
	if _, err := h.StartOwner(); err != nil {
		return f.failed(err)
	}
	after, still := before, time.Now()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && time.Since(still) < 3*time.Second; {
		time.Sleep(250 * time.Millisecond)
		if mb := journalMB(h.State); mb != after {
			after, still = mb, time.Now()
		}
	}
	f.Value = Stat{N: 1, Median: after, P99: after, Mean: after}
	f.Note = fmt.Sprintf("%.0f MB before retention", before)
	return f
}

// journalMB is the size of state/journal.db plus its -wal, in MB (0 for what is missing).
func journalMB(state string) float64 {
	var n int64
	for _, name := range []string{"journal.db", "journal.db-wal"} {
		if fi, err := os.Stat(filepath.Join(state, name)); err == nil {
			n += fi.Size()
		}
	}
	return float64(n) / 1e6
}

// thousands formats n with commas: 1000000 → "1,000,000".
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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
