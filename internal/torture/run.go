//go:build linux

package torture

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options configure one chaos run.
type Options struct {
	Bin      string        // the routinely binary under attack
	Dir      string        // working directory: home/, logs, shared file (kept on failure)
	Duration time.Duration // how long the attacks last
	Seed     int64
	Out      io.Writer // actions and summary
}

// Run starts the contenders, attacks them for opts.Duration, shuts everything down and
// verifies what was recorded.
func Run(opts Options) (*Report, error) {
	home := filepath.Join(opts.Dir, "home")
	shared := filepath.Join(opts.Dir, "shared.log")
	stamps := filepath.Join(opts.Dir, "stamps.log")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, err
	}
	if err := WriteConfig(home, shared, stamps); err != nil {
		return nil, err
	}
	clock := NewClock()
	actions, err := os.Create(filepath.Join(opts.Dir, "actions.log"))
	if err != nil {
		return nil, err
	}
	defer actions.Close()
	fmt.Fprintf(opts.Out, "chaos run starting: seed %d for %v in %s\n", opts.Seed, opts.Duration, opts.Dir)
	d := NewDriver(opts.Bin, home, opts.Dir, opts.Seed, actions)
	defer d.KillAll() // only matters if the run is cut short
	d.Start()
	deadline := time.Now().Add(opts.Duration)
	for time.Now().Before(deadline) {
		// Pauses of 0.3–2.5 s: fast enough to hit owners mid-run and mid-takeover, slow enough
		// for standbys to take over and for slots to fire in between.
		time.Sleep(300*time.Millisecond + time.Duration(d.Rng.Int63n(int64(2200*time.Millisecond))))
		d.Step()
	}
	d.Calm()
	calm := MonoNow()
	time.Sleep(6 * time.Second) // let the last owner handle the slots of the span, catch-up included
	end := MonoNow()
	// Drain is bounded by the runs in flight: the 4 s run, or the 2 s timeout plus 5 s to SIGKILL.
	stuck := d.Shutdown(20 * time.Second)
	if d := clock.Drift(); d > 50*time.Millisecond || d < -50*time.Millisecond {
		fmt.Fprintf(opts.Out, "warning: wall clock moved %v against the monotonic clock during the run\n", d)
	}

	ev := Evidence{Procs: d.Records(), Events: map[int][]OwnEvent{}, Stops: d.Windows(), Clock: clock, CalmMono: calm, EndMono: end}
	for _, p := range ev.Procs {
		if ev.Events[p.ID], err = ParseEvents(p.LogPath); err != nil {
			return nil, err
		}
	}
	if ev.Effects, ev.EffectProblems, err = ReadSideEffects(shared); err != nil {
		return nil, err
	}
	if ev.Lifetimes, ev.StampProblems, err = ReadStamps(stamps); err != nil {
		return nil, err
	}
	ev.Runs, ev.JournalErr = ReadJournal(filepath.Join(home, "journal.db"))
	rep := Verify(ev)
	if len(stuck) > 0 {
		rep.Checks = append(rep.Checks, &Check{Name: "clean shutdown", Violations: []string{
			fmt.Sprintf("pids %v did not exit within 20 s of SIGTERM (SIGKILLed)", stuck)}})
	}
	PrintSummary(opts.Out, opts, rep, d.Counts(), len(ev.Procs))
	return rep, nil
}

// PrintSummary writes the verdict: one line per check, its notes and its violations.
func PrintSummary(w io.Writer, opts Options, r *Report, counts map[string]int, procs int) {
	fmt.Fprintf(w, "chaos run: seed %d, %v, %d daemons started, dir %s\n", opts.Seed, opts.Duration, procs, opts.Dir)
	fmt.Fprintf(w, "actions: %v\n", counts)
	for _, c := range r.Checks {
		verdict := "ok  "
		if len(c.Violations) > 0 {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%s %s\n", verdict, c.Name)
		for _, n := range c.Notes {
			fmt.Fprintf(w, "       %s\n", n)
		}
		for i, v := range c.Violations {
			if i == 20 {
				fmt.Fprintf(w, "     ! … %d more\n", len(c.Violations)-20)
				break
			}
			fmt.Fprintf(w, "     ! %s\n", v)
		}
	}
}
