//go:build linux

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

func main() {
	if runHelper() {
		return
	}
	bin := flag.String("bin", "./build/routinely-nogui", "the routinely binary to measure")
	quick := flag.Bool("quick", false, "fewer trials and shorter windows (for development)")
	readme := flag.String("readme", "", "also write the table into this README between "+markStart+" and "+markEnd)
	only := flag.String("only", "", "run only the steps whose name matches this regexp (recovery, takeover, lateness, lateness-engine, claims, load-arm, heartbeat, idle, looks-10k, looks-1m, run-now, hub-claim, hub-coverage, binary-size)")
	skipGo := flag.Bool("skip-go-bench", false, "leave out the figures that come from the packages' Go benchmarks")
	flag.Parse()
	pick, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -only:", err)
		os.Exit(2)
	}
	if abs, err := filepath.Abs(*bin); err == nil {
		*bin = abs
	}
	if _, err := os.Stat(*bin); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v (build it with `make build-nogui`)\n", err)
		os.Exit(2)
	}
	root, err := os.MkdirTemp("", "routinely-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(root)

	trials, runNowTrials, idle, lateWindow := 50, 20, 60*time.Second, 60*time.Second
	// Crash recovery's p99 is compared with a baseline's p99: of 50 trials that is the slowest
	// one (quantile), and two such maxima differed by 2× between runs here; of 200 it is the third
	// slowest. The quick looks' goals are p99s too: of their former 30 trials the p99 was the
	// slowest launch, which one page-cache miss or scheduler hiccup decides on 2 cores.
	recoveryTrials, statusRuns := 200, 200
	if *quick {
		trials, statusRuns, runNowTrials, idle, lateWindow = 8, 10, 4, 10*time.Second, 10*time.Second
		recoveryTrials = trials
	}
	// Each step measures one or two figures; -only picks steps by name (for development).
	steps := []struct {
		name    string
		goBench bool
		run     func() []Figure
	}{
		{"recovery", false, func() []Figure { l, o := Recovery(*bin, root, recoveryTrials); return []Figure{l, o} }},
		{"takeover", false, func() []Figure { return []Figure{Takeover(*bin, root, min(trials, 30))} }},
		{"lateness", false, func() []Figure { return []Figure{FireLateness(*bin, root, lateWindow)} }},
		{"lateness-engine", true, func() []Figure { return []Figure{FireLatenessInProcess(lateWindow)} }},
		{"claims", true, func() []Figure { return []Figure{JournalClaims(*quick)} }},
		{"load-arm", true, func() []Figure { t, m := LoadArm(*quick); return []Figure{t, m} }},
		{"heartbeat", true, func() []Figure { return []Figure{Heartbeat()} }},
		{"idle", false, func() []Figure { r, c, w := Idle(*bin, root, idle); return []Figure{r, c, w} }},
		{"looks-10k", false, func() []Figure { return QuickLooks(*bin, root, statusRuns, 10_000, 50, false) }},
		{"looks-1m", false, func() []Figure { return QuickLooks(*bin, root, statusRuns, 1_000_000, 100, true) }},
		{"run-now", false, func() []Figure { return []Figure{RunNow(*bin, root, runNowTrials)} }},
		{"hub-claim", true, func() []Figure { return []Figure{HubClaim(*quick)} }},
		{"hub-coverage", false, func() []Figure { return []Figure{CoverageGap(*bin, root, min(trials, 6))} }},
		{"binary-size", true, func() []Figure { d, s := BinarySize(root); return []Figure{d, s} }},
	}
	var figs []Figure
	for _, st := range steps {
		if (st.goBench && *skipGo) || !pick.MatchString(st.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "bench: %s…\n", st.name)
		figs = append(figs, st.run()...)
	}

	var table bytes.Buffer
	Render(&table, figs, *quick)
	os.Stdout.Write(table.Bytes())
	if *readme != "" {
		if err := UpdateReadme(*readme, table.Bytes()); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	}
}
