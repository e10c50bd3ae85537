//go:build linux

package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// Figure is one row of the table.
type Figure struct {
	Name     string
	Unit     string // "ms", "MB", "%", "/s", "s"
	Value    Stat
	Baseline *Stat  // measured in the same run, when the issue names one
	Goal     string // as the issue states it, e.g. "p99 ≤ 60 ms, ratio ≤ 1.2"
	// Met judges the figure against its goal; nil when it was not measured.
	Met  func(f Figure) bool
	Note string // how it was measured, or why it was not
	Err  error  // the figure could not be measured
}

// Ratio is the figure's p99 over its baseline's p99 (0 without a baseline).
func (f Figure) Ratio() float64 {
	if f.Baseline == nil || f.Baseline.P99 == 0 {
		return 0
	}
	return f.Value.P99 / f.Baseline.P99
}

// failed returns f marked as not measured because of err (what was measured so far is kept).
func (f Figure) failed(err error) Figure {
	f.Err = err
	return f
}

// Render writes the Markdown table with the date and the machine above it.
func Render(w io.Writer, figs []Figure, quick bool) {
	host := runtime.GOOS + "/" + runtime.GOARCH
	mode := ""
	if quick {
		mode = " — **quick run** (fewer trials, shorter windows)"
	}
	fmt.Fprintf(w, "Measured %s on %s, %d cores, %s%s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), host, runtime.NumCPU(), cpuModel(), mode)
	fmt.Fprintln(w, "| figure | median | p99 | n | baseline (median / p99) | ratio | goal | result |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, f := range figs {
		base, ratio := "—", "—"
		if f.Baseline != nil {
			base = fmt.Sprintf("%s / %s", num(f.Baseline.Median, f.Unit), num(f.Baseline.P99, f.Unit))
			ratio = fmt.Sprintf("%.2f", f.Ratio())
		}
		result := "✅ met"
		switch {
		case f.Err != nil:
			result = "⚠️ not measured: " + oneLine(f.Err.Error())
		case f.Met == nil:
			result = "—"
		case !f.Met(f):
			result = "❌ **missed**"
		}
		if f.Note != "" {
			result += " (" + f.Note + ")"
		}
		med, p99, n := "—", "—", "—"
		if f.Err == nil {
			med, p99, n = num(f.Value.Median, f.Unit), num(f.Value.P99, f.Unit), fmt.Sprint(f.Value.N)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", f.Name, med, p99, n, base, ratio, f.Goal, result)
	}
}

// num formats v in unit with 2, 1 or 0 decimals by size (a rate "/s" always with none).
func num(v float64, unit string) string {
	switch {
	case unit == "/s":
		return fmt.Sprintf("%.0f/s", v)
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, unit)
	default:
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}

// oneLine makes s fit one table cell: no newlines, no "|", at most 160 bytes plus "…".
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
