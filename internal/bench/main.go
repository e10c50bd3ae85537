//go:build linux

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func main() {
	if runHelper() {
		return
	}
	bin := flag.String("bin", "./build/routinely-nogui", "the routinely binary to measure")
	quick := flag.Bool("quick", false, "fewer trials and shorter windows (for development)")
	readme := flag.String("readme", "", "also write the table into this README between "+markStart+" and "+markEnd)
	skipGo := flag.Bool("skip-go-bench", false, "leave out the figures that come from the packages' Go benchmarks")
	flag.Parse()
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

	trials, statusRuns, idle, lateWindow := 50, 30, 60*time.Second, 60*time.Second
	if *quick {
		trials, statusRuns, idle, lateWindow = 8, 10, 10*time.Second, 10*time.Second
	}
	var figs []Figure
	add := func(f ...Figure) {
		for _, x := range f {
			fmt.Fprintf(os.Stderr, "bench: %s done\n", x.Name)
		}
		figs = append(figs, f...)
	}
	add(Recovery(*bin, root, trials))
	add(Takeover(*bin, root, min(trials, 30)))
	add(FireLateness(*bin, root, lateWindow))
	if !*skipGo {
		add(FireLatenessInProcess(lateWindow))
		add(JournalClaims(*quick))
		add(LoadArm(*quick))
		add(Heartbeat())
	}
	add(Idle(*bin, root, idle))
	add(StatusLatency(*bin, root, statusRuns))

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
