package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// loadExample writes text as routines.toml in a new temporary directory and loads it. It returns
// the directory (remove it when done) and the config.
func loadExample(text string) (string, *config.Config, error) {
	dir, err := os.MkdirTemp("", "routinely-example-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "routines.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return dir, nil, err
	}
	cfg, err := config.LoadConfig(path)
	if err == nil && len(cfg.Problems) > 0 {
		err = errors.New(cfg.Problems[0].String())
	}
	return dir, cfg, err
}

// Preview lists the slots a routine will run at, computed by the same schedule its timer is armed
// with: wall-clock times stay put across a daylight-saving change (Paris moves to summer time on
// Sunday 31 March 2024), and an `every` grid counts from the given instant when the routine has
// not been armed yet (PreviewArmed uses the grid its owner armed).
func ExamplePreview() {
	dir, cfg, err := loadExample(`
[[routine]]
name = "standup"
at = ["09:30"]
days = ["mon", "tue", "wed", "thu", "fri"]
timezone = "Europe/Paris"
notify = { title = "Stand-up in five minutes" }

[[routine]]
name = "backup"
cron = "0 */6 * * *"
timezone = "UTC"
notify = { title = "Backup due" }

[[routine]]
name = "stretch"
every = "90m"
timezone = "UTC"
notify = { title = "Stand up and stretch" }
`)
	defer os.RemoveAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	from := time.Date(2024, time.March, 28, 12, 0, 0, 0, time.UTC) // a Thursday
	for _, r := range cfg.Routines {
		slots, err := scheduler.Preview(r, from, 3)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s (%s):\n", r.Name, r.Describe())
		for _, s := range slots {
			fmt.Println("  ", s.Format("Mon 2006-01-02 15:04 MST"))
		}
	}
	// Output:
	// standup (at 09:30 Mon–Fri):
	//    Fri 2024-03-29 09:30 CET
	//    Mon 2024-04-01 09:30 CEST
	//    Tue 2024-04-02 09:30 CEST
	// backup (cron 0 */6 * * *):
	//    Thu 2024-03-28 18:00 UTC
	//    Fri 2024-03-29 00:00 UTC
	//    Fri 2024-03-29 06:00 UTC
	// stretch (every 1h30m):
	//    Thu 2024-03-28 13:30 UTC
	//    Thu 2024-03-28 15:00 UTC
	//    Thu 2024-03-28 16:30 UTC
}

// printNotifier shows notifications on stdout (the desktop app shows them in the tray).
type printNotifier struct{}

func (printNotifier) Notify(title, body string) error {
	fmt.Printf("notification: %s: %s\n", title, body)
	return nil
}

// The journal is the run history every process reads. Here an owner (an ownership handle gating
// an engine) serves a run-now request another process could have made, as `routinely run`
// does; then an observer opens the journal read-only, as `routinely history` and the app in
// standby do, and reads the run back.
func ExampleJournal_History() {
	dir, _, err := loadExample(`
[[routine]]
name = "hello"
at = ["03:00"]
days = ["sun"]
timezone = "UTC"
notify = { title = "Hello", body = "from the journal example" }
`)
	defer os.RemoveAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	routines, journalPath := filepath.Join(dir, "routines.toml"), filepath.Join(dir, "journal.db")

	// The owner: only the process holding the ownership guard runs routines and writes runs.
	stateDir, err := ownership.StateDir(filepath.Join(dir, "state"))
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := ownership.Acquire(ctx, ownership.Options{Dir: stateDir, Version: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = h.Release(ctx) }()
	j, err := journal.Open(journalPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer j.Close()
	eng, err := scheduler.NewEngine(scheduler.EngineOptions{ConfigPath: routines, Journal: j, Gate: h,
		Notifier: printNotifier{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := eng.Start(ctx); err != nil { // records the owner's epoch in the journal, arms the timers
		fmt.Println(err)
		return
	}
	defer func() { _ = eng.Stop(ctx) }()

	// Anyone may ask the owner to run a routine now; the owner claims, runs and records it.
	requests, err := journal.Open(journalPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer requests.Close()
	reqID, err := requests.RequestRun("hello")
	if err != nil {
		fmt.Println(err)
		return
	}
	run, err := waitForRun(requests, reqID, 30*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("request %d became run %d: %s\n", reqID, run.ID, run.Outcome)

	// An observer: read-only, it never writes (and works while the owner writes).
	ro, err := journal.OpenReadOnly(journalPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ro.Close()
	runs, err := ro.History("hello", 10) // newest first
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range runs {
		fmt.Printf("run %d: %s %s, %s, epoch %d (the owner's: %v)\n", r.ID, r.Routine, r.Trigger, r.Outcome,
			r.Epoch, r.Epoch == h.Epoch())
	}
	cfg, err := config.LoadConfig(routines)
	if err != nil {
		fmt.Println(err)
		return
	}
	states, err := scheduler.States(cfg, ro, time.Now())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range states {
		fmt.Printf("%s: %s, last run %d %s\n", st.Name, st.Schedule, st.Last.ID, st.Last.Outcome)
	}
	// Output:
	// notification: Hello: from the journal example
	// request 1 became run 1: success
	// run 1: hello manual, success, epoch 1 (the owner's: true)
	// hello: at 03:00 Sun, last run 1 success
}

// waitForRun returns the run that run-now request reqID became, once it has finished, polling j
// as `routinely run` does (the owner picks requests up within a second). Errors: the journal's;
// one saying so when timeout passes first.
func waitForRun(j *journal.Journal, reqID int64, timeout time.Duration) (journal.Run, error) {
	deadline := time.Now().Add(timeout)
	for {
		runID, err := j.RequestResult(reqID) // 0 until the owner has claimed the run
		if err != nil {
			return journal.Run{}, err
		}
		if runID != 0 {
			r, err := j.Run(runID)
			if err != nil || r.Outcome != journal.OutcomeRunning {
				return r, err
			}
		}
		if time.Now().After(deadline) {
			return journal.Run{}, fmt.Errorf("run-now request %d: no finished run after %s", reqID, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
