package scheduler

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/action"
	"github.com/routinely/routinely/scheduler/journal"
)

// A run-now request goes through the real shell action: a real process that sees the
// ROUTINELY_* environment, whose output and exit code land in the journal with trigger manual.
func TestRunNowWithRealShellAction(t *testing.T) {
	script := `"echo \"$ROUTINELY_ROUTINE $ROUTINELY_TRIGGER $ROUTINELY_EPOCH run=$ROUTINELY_RUN_ID\"; exit 3"`
	if runtime.GOOS == "windows" { // the same through cmd /C
		script = `'echo %ROUTINELY_ROUTINE% %ROUTINELY_TRIGGER% %ROUTINELY_EPOCH% run=%ROUTINELY_RUN_ID%& exit 3'`
	}
	h := newHarness(t, `[[routine]]
name = "hello"
cron = "0 0 1 1 *"
shell = `+script+"\n", time.Now())
	e, err := NewEngine(EngineOptions{ConfigPath: h.cfg, Journal: h.j, Gate: h.gate, Clock: h.clock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), WakeClock: newFakeWallMono(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Stop(context.Background()) }()
	req, err := h.j.RequestRun("hello")
	if err != nil {
		t.Fatal(err)
	}
	var runID int64
	eventually(t, "request answered", func() bool { runID, _ = h.j.RequestResult(req); return runID > 0 })
	eventually(t, "run finished", func() bool { r, _ := h.j.Run(runID); return r.Outcome != journal.OutcomeRunning })
	r, _ := h.j.Run(runID)
	if r.Outcome != journal.OutcomeFailed || r.ExitCode == nil || *r.ExitCode != 3 || r.Trigger != journal.TriggerManual || r.Attempts != 1 {
		t.Fatalf("run: %+v", r)
	}
	out, _ := h.j.Output(runID)
	if got := strings.TrimSpace(string(out)); got != "hello manual 1 run="+itoa(runID) {
		t.Fatalf("output %q", got)
	}
}

// Retries are recorded as one history entry with its attempts.
func TestAttemptsRecorded(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"r\"\nevery = \"1m\"\nretries = 2\nrun = [\"/bin/true\"]\n", start)
	h.act.result = func(int) action.Result { return action.Result{Outcome: journal.OutcomeSuccess, Attempts: 3} }
	h.start()
	h.stepMinute()
	eventually(t, "run", func() bool { r := runsOf(t, h.j, "r"); return len(r) == 1 && r[0].Attempts == 3 })
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
