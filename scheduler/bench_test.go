package scheduler

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"

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
	return action.Result{Outcome: OutcomeSuccess, Attempts: 1}
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
func benchEngine(b *testing.B, config string) (*Engine, *Journal) {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "routines.toml"), []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	j, err := OpenJournal(filepath.Join(dir, "journal.db"))
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

// BenchmarkClaims: fenced, unique slot claims per second on a real journal file, against raw
// SQLite inserts of the same row shape with the same pragmas.
func BenchmarkClaims(b *testing.B) {
	b.Run("journal", func(b *testing.B) {
		j := acquiredJournal(b)
		base := time.Unix(1_700_000_000, 0)
		b.ResetTimer()
		for i := range b.N {
			if _, err := j.Claim(claim{Routine: "r" + strconv.Itoa(i%100), Slot: base.Add(time.Duration(i) * time.Second),
				Trigger: TriggerSchedule, Outcome: OutcomeRunning, Started: base}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
	})
	b.Run("journal-parallel", func(b *testing.B) {
		// 64 routines claiming at once, as when many are due in the same second (group commit).
		j := acquiredJournal(b)
		base := time.Unix(1_700_000_000, 0)
		var next atomic.Int64
		b.SetParallelism(32)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := next.Add(1)
				if _, err := j.Claim(claim{Routine: "r" + strconv.FormatInt(i%64, 10), Slot: base.Add(time.Duration(i) * time.Second),
					Trigger: TriggerSchedule, Outcome: OutcomeRunning, Started: base}); err != nil && !errors.Is(err, ErrSlotClaimed) {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
	})
	b.Run("raw-sqlite", func(b *testing.B) {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(5000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "raw.db")+"?"+q.Encode())
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE runs (id INTEGER PRIMARY KEY, routine TEXT, slot_key TEXT, slot INTEGER,
			trigger TEXT, epoch INTEGER, outcome TEXT, started INTEGER, UNIQUE (routine, slot_key))`); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := db.Exec(`INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome, started) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				"r"+strconv.Itoa(i%100), strconv.Itoa(i), i, TriggerSchedule, 1, OutcomeRunning, i); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
	})
}
