//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
)

// FireLateness runs the real daemon with 100 routines every second for window and reads each
// scheduled run's late_by from its journal; the baseline is bare gocron in this process with
// the same 100 once-a-second jobs running the same command, no journal and no ownership.
func FireLateness(bin, root string, window time.Duration) Figure {
	f := Figure{Name: fmt.Sprintf("fire lateness, 100 routines every 1 s for %v", window), Unit: "ms",
		Goal: "p99 ≤ 10 ms, ratio ≤ 1.5", Met: func(f Figure) bool { return f.Value.P99 <= 10 && f.Ratio() <= 1.5 },
		Note: "real daemon, journal late_by; each run starts /bin/true"}
	h, err := NewHome(bin, root, "lateness", routinesEvery("tick", "1s", 100))
	if err != nil {
		return f.failed(err)
	}
	defer h.Close()
	d, err := h.StartOwner()
	if err != nil {
		return f.failed(err)
	}
	from := time.Now().Add(2 * time.Second) // past start-up and the first catch-up pass
	time.Sleep(window + 2*time.Second)
	to := time.Now().Add(-time.Second)
	if err := StopDaemon(d, 30*time.Second); err != nil {
		return f.failed(err)
	}
	late, err := journalLateness(filepath.Join(h.State, "journal.db"), from, to)
	if err != nil {
		return f.failed(err)
	}
	if want := 100 * int(to.Sub(from)/time.Second); len(late) < want*9/10 {
		f.Note += fmt.Sprintf("; only %d of ~%d slots ran", len(late), want)
	}
	f.Value = Summarize(late)
	base, err := gocronLateness(window)
	if err != nil {
		return f.failed(fmt.Errorf("baseline: %w", err))
	}
	f.Baseline = &base
	return f
}

// gocronLateness schedules 100 jobs on every whole second with bare gocron for window; each
// records how late it started against its second, then runs /bin/true as the daemon's do.
func gocronLateness(window time.Duration) (Stat, error) {
	s, err := gocron.NewScheduler()
	if err != nil {
		return Stat{}, err
	}
	var mu sync.Mutex
	var ms []float64
	from := time.Now().Add(2 * time.Second)
	for i := 0; i < 100; i++ {
		_, err := s.NewJob(gocron.CronJob("* * * * * *", true), gocron.NewTask(func() {
			now := time.Now()
			if now.After(from) {
				mu.Lock()
				ms = append(ms, float64(now.Sub(now.Truncate(time.Second)))/1e6)
				mu.Unlock()
			}
			_ = exec.Command("/bin/true").Run()
		}))
		if err != nil {
			return Stat{}, err
		}
	}
	s.Start()
	time.Sleep(window + 2*time.Second)
	if err := s.Shutdown(); err != nil {
		return Stat{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	return Summarize(ms), nil
}
