//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/routinely/routinely/internal/torture"
)

// HubClaim reads the hub package's claim benchmark: one device's claim of a fresh slot through
// a real embedded hub on loopback (two fsynced writes: the run key and the slot key).
func HubClaim(quick bool) Figure {
	f := Figure{Name: "hub claim latency, loopback", Unit: "ms", Goal: "p99 ≤ 5 ms",
		Met:  func(f Figure) bool { return f.Value.P99 <= 5 },
		Note: "hub package benchmark, 500 claims per run; the hub fsyncs each write"}
	count := 3
	if quick {
		count = 1
	}
	runs, err := goBench("hub", "HubClaim", "500x", count)
	if err != nil {
		return f.failed(err)
	}
	st, err := quantiles(runs, nil, nil)
	if err != nil {
		return f.failed(err)
	}
	f.Value = st
	return f
}

// BinarySize builds, stripped, the nogui routinely binary (the hub client only) and the
// routinely-hub program (the server that `routinely hub` hands over to), and reports both sizes.
func BinarySize(root string) (device, server Figure) {
	device = Figure{Name: "binary size, nogui (hub client only)", Unit: "MB", Goal: "—", Met: func(Figure) bool { return true }}
	server = Figure{Name: "binary size, routinely-hub (the hub server)", Unit: "MB", Goal: "—", Met: func(Figure) bool { return true }}
	size := func(name, tags, pkg string) (float64, error) {
		out := filepath.Join(root, "size-"+name)
		cmd := exec.Command("go", "build", "-tags", tags, "-ldflags", "-s -w", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build %s: %v: %s", pkg, err, lastLines(b, 3))
		}
		fi, err := os.Stat(out)
		if err != nil {
			return 0, err
		}
		return float64(fi.Size()) / 1e6, nil
	}
	for _, b := range []struct {
		f         *Figure
		name, pkg string
	}{{&device, "routinely", "github.com/routinely/routinely"}, {&server, "routinely-hub", "github.com/routinely/routinely/cmd/routinely-hub"}} {
		if mb, err := size(b.name, "nogui", b.pkg); err != nil {
			*b.f = b.f.failed(err)
		} else {
			b.f.Value = Stat{N: 1, Median: mb, P99: mb, Mean: mb}
			b.f.Note = "stripped (-s -w)"
		}
	}
	return device, server
}

var hubURL = regexp.MustCompile(`Hub listening on (nats://\S+)`)

// CoverageGap measures, with the real binary, how long a slot goes unrun after one of two
// devices is SIGKILLed in the middle of a run (holding the routine's run key): from the kill to
// the start of the next run on the other device. The routine is every 1 s and runs 0.4 s.
func CoverageGap(bin, root string, trials int) Figure {
	const ttl = 5 * time.Second
	f := Figure{Name: "coverage gap after a device SIGKILL mid-run", Unit: "ms", Goal: "≤ liveness TTL (5 s) + 1 s",
		Met: func(f Figure) bool { return f.Value.P99 <= float64((ttl+time.Second)/time.Millisecond) }}
	dir := filepath.Join(root, "coverage")
	store := filepath.Join(dir, "hub-store")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return f.failed(err)
	}
	hub, err := torture.StartProc(bin, dir, 100, []string{"hub", "--listen", "127.0.0.1:0", "--store", store})
	if err != nil {
		return f.failed(err)
	}
	defer func() { hub.Term(); hub.WaitExit(5 * time.Second) }()
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if log, err := os.ReadFile(hub.LogPath); err == nil {
			if m := hubURL.FindSubmatch(log); m != nil {
				url = string(m[1])
			}
		}
	}
	token, err := os.ReadFile(filepath.Join(store, "hub.token"))
	if url == "" || err != nil {
		return f.failed(fmt.Errorf("the hub did not start: %v %s", err, tail(hub.LogPath)))
	}
	out := filepath.Join(dir, "runs.txt")
	homes := map[string]*Home{}
	for _, dev := range []string{"laptop", "desktop"} {
		h, err := NewHome(bin, dir, dev, fmt.Sprintf(`[hub]
url = %q
token_file = "hub.token"
device = %q
liveness_ttl = %q

[[routine]]
name = "tick"
every = "1s"
shell = 'echo "$ROUTINELY_DEVICE $(date +%%s%%N)" >> %q; sleep 0.4'
`, url, dev, ttl.String(), out))
		if err != nil {
			return f.failed(err)
		}
		if err := os.WriteFile(filepath.Join(h.State, "hub.token"), token, 0o600); err != nil {
			return f.failed(err)
		}
		defer h.Close()
		homes[dev] = h
	}
	procs := map[string]*torture.Proc{}
	for dev, h := range homes {
		p, err := h.StartOwner()
		if err != nil {
			return f.failed(err)
		}
		procs[dev] = p
	}
	var ms []float64
	for i := 0; i < trials; i++ {
		victim, other := "laptop", "desktop"
		if i%2 == 1 {
			victim, other = other, victim
		}
		// Kill the victim as soon as it has started a run: it holds the run key for 0.4 s.
		seen := countLines(out, victim)
		deadline := time.Now().Add(30 * time.Second)
		for countLines(out, victim) == seen {
			if time.Now().After(deadline) {
				return f.failed(fmt.Errorf("trial %d: %s ran nothing in 30 s", i+1, victim))
			}
			time.Sleep(5 * time.Millisecond)
		}
		killed := time.Now()
		procs[victim].Kill()
		procs[victim].WaitExit(5 * time.Second)
		var next time.Time
		for next.IsZero() {
			if time.Since(killed) > 30*time.Second {
				return f.failed(fmt.Errorf("trial %d: %s took over nothing in 30 s", i+1, other))
			}
			next = firstStartAfter(out, other, killed)
			time.Sleep(20 * time.Millisecond)
		}
		ms = append(ms, float64(next.Sub(killed))/1e6)
		p, err := homes[victim].StartOwner()
		if err != nil {
			return f.failed(err)
		}
		procs[victim] = p
		time.Sleep(3 * time.Second)
	}
	f.Value = Summarize(ms)
	f.Note = fmt.Sprintf("real binary: routinely hub and two device daemons, liveness_ttl %s, every 1 s, each run 0.4 s", ttl)
	return f
}

// countLines counts the lines of path written by device.
func countLines(path, device string) int {
	data, _ := os.ReadFile(path)
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, device+" ") {
			n++
		}
	}
	return n
}

// firstStartAfter returns the start time of device's first run that started after t (zero: none).
func firstStartAfter(path, device string, t time.Time) time.Time {
	data, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 || f[0] != device {
			continue
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err == nil && time.Unix(0, ns).After(t) {
			return time.Unix(0, ns)
		}
	}
	return time.Time{}
}
