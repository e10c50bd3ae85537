package scheduler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"

	"github.com/go-co-op/gocron/v2"

	"github.com/routinely/routinely/scheduler/action"
)

// benchWindow is how long the lateness benchmark measures (the README's figure is for 60 s; the default
// is shorter so `make bench` stays quick). Set ROUTINELY_BENCH_WINDOW=60s for the full run.
func benchWindow() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("ROUTINELY_BENCH_WINDOW")); err == nil && d > 0 {
		return d
	}
	return 10 * time.Second
}

// latencies collects lateness samples safely.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) pct(p float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l.d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(p*float64(len(s)-1))]) / float64(time.Millisecond)
}

// lateAction records how late after its slot each run starts.
type lateAction struct{ l *latencies }

func (a lateAction) Run(_ context.Context, in action.Input) action.Result {
	a.l.add(time.Since(in.Slot))
	return action.Result{Outcome: journal.OutcomeSuccess, Attempts: 1}
}

// BenchmarkFireLateness: 100 routines every second through the whole engine (elector, claim in
// SQLite, run) against bare gocron firing 100 jobs every second in the same run. Lateness is
// the time from the slot to the start of the routine's action (engine) or task (gocron).
func BenchmarkFireLateness(b *testing.B) {
	window := benchWindow()
	for range b.N {
		// Bare gocron.
		var bare latencies
		s, err := gocron.NewScheduler()
		if err != nil {
			b.Fatal(err)
		}
		for i := range 100 {
			if _, err := s.NewJob(gocron.CronJob("* * * * * *", true), gocron.NewTask(func() {
				now := time.Now()
				bare.add(now.Sub(now.Truncate(time.Second)))
			}), gocron.WithName(strconv.Itoa(i))); err != nil {
				b.Fatal(err)
			}
		}
		s.Start()
		time.Sleep(window)
		_ = s.Shutdown()

		// The engine.
		var eng latencies
		var cfg strings.Builder
		for i := range 100 {
			fmt.Fprintf(&cfg, "[[routine]]\nname = \"r%d\"\nevery = \"1s\"\nnotify = { title = \"x\" }\n", i)
		}
		e, j := benchEngine(b, cfg.String())
		e.newAction = func(*config.Routine) (action.Action, error) { return lateAction{&eng}, nil }
		if err := e.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		time.Sleep(window)
		_ = e.Stop(context.Background())
		_ = j.Close()

		b.ReportMetric(eng.pct(0.5), "engine_p50_ms")
		b.ReportMetric(eng.pct(0.99), "engine_p99_ms")
		b.ReportMetric(bare.pct(0.5), "gocron_p50_ms")
		b.ReportMetric(bare.pct(0.99), "gocron_p99_ms")
		if g := bare.pct(0.99); g > 0 {
			b.ReportMetric(eng.pct(0.99)/g, "p99_ratio")
		}
		b.ReportMetric(float64(len(eng.d)), "engine_runs")
	}
}

// BenchmarkLoadAndArm10k: routines.toml with 10,000 routines parsed, validated, recorded and
// armed in gocron (Engine.Start). Reports the time per start and the process RSS afterwards.
func BenchmarkLoadAndArm10k(b *testing.B) {
	var cfg strings.Builder
	for i := range 10000 {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&cfg, "[[routine]]\nname = \"r%d\"\nevery = \"%dm\"\nnotify = { title = \"x\" }\n", i, 1+i%59)
		case 1:
			fmt.Fprintf(&cfg, "[[routine]]\nname = \"r%d\"\ncron = \"%d 8 * * MON-FRI\"\nnotify = { title = \"x\" }\n", i, i%60)
		default:
			fmt.Fprintf(&cfg, "[[routine]]\nname = \"r%d\"\nat = [\"%02d:%02d\"]\ntimezone = \"Europe/Berlin\"\nnotify = { title = \"x\" }\n", i, i%24, i%60)
		}
	}
	for range b.N {
		b.StopTimer()
		e, j := benchEngine(b, cfg.String())
		b.StartTimer()
		if err := e.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if n := len(e.sched.Jobs()); n != 10000 {
			b.Fatalf("%d jobs armed", n)
		}
		b.ReportMetric(rssMB(), "rss_MB")
		_ = e.Stop(context.Background())
		_ = j.Close()
		b.StartTimer()
	}
}

// benchEngine is an engine (not started, real clock, epoch 1) over routines.toml = config and
// a new journal in a temporary directory.
func benchEngine(b *testing.B, config string) (*Engine, *journal.Journal) {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "routines.toml"), []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	j, err := journal.Open(filepath.Join(dir, "journal.db"))
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewEngine(EngineOptions{ConfigPath: filepath.Join(dir, "routines.toml"), Journal: j, Gate: newGate(1),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return e, j
}

// rssMB reads the resident set size (Linux); 0 elsewhere.
func rssMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.Sys) / (1 << 20)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
