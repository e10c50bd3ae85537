//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// The scheduler's figures come from its own Go benchmarks; this file runs them and
// reads the metrics they report with b.ReportMetric. Matching is by substrings of the metric
// unit so the benchmarks can name them naturally ("p99-ms", "gocron-p99-ms", "claims/s").

const module = "github.com/routinely/routinely/"

// benchRuns maps a benchmark name (without the -CPU suffix) to one metrics map per -count run.
type benchRuns map[string][]map[string]float64

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// goBench runs `go test -run ^$ -bench pattern -benchtime benchtime -count count` in pkg (a path
// below the module), with env ("K=V") added to its environment, and parses every metric of every
// run. The error carries the last lines of go test's output, or says no benchmark matched.
func goBench(pkg, pattern, benchtime string, count int, env ...string) (benchRuns, error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime,
		"-count", strconv.Itoa(count), module+pkg)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go test -bench %s ./%s: %v: %s", pattern, pkg, err, lastLines(out, 3))
	}
	runs := benchRuns{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		metrics := map[string]float64{}
		fs := strings.Fields(m[2])
		for i := 0; i+1 < len(fs); i += 2 {
			if v, err := strconv.ParseFloat(fs[i], 64); err == nil {
				metrics[fs[i+1]] = v
			}
		}
		runs[m[1]] = append(runs[m[1]], metrics)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no benchmark matching %s in ./%s", pattern, pkg)
	}
	return runs, nil
}

// series collects, across runs of the first benchmark, the metric whose unit contains every
// string of want and none of avoid; the scale converts it to the figure's unit. It returns the
// values, "BENCHMARK UNIT" they came from, and an error naming the benchmarks when none matched.
func (r benchRuns) series(want, avoid []string, scale float64) ([]float64, string, error) {
	for name, runs := range r {
		var xs []float64
		unit := ""
		for _, metrics := range runs {
			for u, v := range metrics {
				if containsAll(u, want) && !containsAny(u, avoid) {
					xs, unit = append(xs, v*scale), u
					break
				}
			}
		}
		if len(xs) > 0 {
			return xs, name + " " + unit, nil
		}
	}
	return nil, "", fmt.Errorf("no metric with %v (not %v) in %v", want, avoid, r.names())
}

// names lists the benchmarks in r, for error messages.
func (r benchRuns) names() []string {
	var n []string
	for k := range r {
		n = append(n, k)
	}
	return n
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// containsAny reports whether s contains at least one of subs.
func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// lastLines returns the last n lines of b joined by " / ", for one-line error messages.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
