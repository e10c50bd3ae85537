package scheduler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/action"
)

type dbgAction struct{ l *latencies }

func (a dbgAction) Run(_ context.Context, in action.Input) action.Result {
	d := time.Since(in.Slot)
	if d > 4*time.Millisecond {
		fmt.Printf("late %v %s %s %s\n", d, in.Routine, in.Slot.Format("15:04:05.000"), in.Trigger)
	}
	a.l.add(d)
	return action.Result{Outcome: OutcomeSuccess, Attempts: 1}
}

func TestZZDebugLateness(t *testing.T) {
	var eng latencies
	var cfg strings.Builder
	for i := range 100 {
		fmt.Fprintf(&cfg, "[[routine]]\nname = \"r%d\"\nevery = \"1s\"\nnotify = { title = \"x\" }\n", i)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "routines.toml"), []byte(cfg.String()), 0o600)
	j, _ := OpenJournal(filepath.Join(dir, "journal.db"))
	e, _ := NewEngine(EngineOptions{ConfigPath: filepath.Join(dir, "routines.toml"), Journal: j, Gate: newGate(1),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	e.newAction = func(*Routine) (action.Action, error) { return dbgAction{&eng}, nil }
	fmt.Println("start", time.Now().Format("15:04:05.000"))
	e.Start(context.Background())
	fmt.Println("started", time.Now().Format("15:04:05.000"))
	time.Sleep(10 * time.Second)
	e.Stop(context.Background())
	j.Close()
	fmt.Println(eng.pct(0.5), eng.pct(0.99), len(eng.d))
}
