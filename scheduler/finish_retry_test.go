package scheduler

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routinely/routinely/internal/syncbuf"
	"github.com/routinely/routinely/scheduler/action"
	"github.com/routinely/routinely/scheduler/journal"
)

// A run whose end cannot be written because another process holds the journal's write lock
// (real SQLITE_BUSY from a second connection in BEGIN IMMEDIATE) is recorded with its real
// outcome once the lock is released, not left `running`.
func TestFinishRetriesWhileJournalLocked(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 59, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"daily\"\nat = [\"09:00\"]\ntimezone = \"UTC\"\nrun = [\"/bin/true\"]\n", start)
	// Reopen the journal with a short busy timeout so the held lock fails Finish quickly.
	_ = h.j.Close()
	path := filepath.Join(h.dir, "journal.db")
	j, err := journal.OpenBusy(path, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	h.j = j
	t.Cleanup(func() { _ = j.Close() })
	log := &syncbuf.Buffer{}
	h.logger = slog.New(slog.NewTextHandler(log, nil))

	// The competing writer: a second *sql.DB on the same file, as another process would hold it.
	other, err := sql.Open("sqlite", journalURI(t, path, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	exit := 3
	h.act.result = func(int) action.Result {
		// The claim is written; take the write lock before the run's end is recorded.
		if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
			t.Errorf("competing writer: %v", err)
		}
		return action.Result{Outcome: journal.OutcomeFailed, ExitCode: &exit, Attempts: 1, Summary: "exit status 3"}
	}
	h.start()
	h.settle()
	h.clock.Advance(time.Minute)

	// Hold the lock at least 500 ms and until Finish has failed once.
	held := time.Now()
	eventually(t, "a failed Finish attempt", func() bool { return strings.Contains(log.String(), "record run failed; retrying") })
	time.Sleep(time.Until(held.Add(500 * time.Millisecond)))
	if r := runsOf(t, h.j, "daily"); len(r) != 1 || r[0].Outcome != journal.OutcomeRunning {
		t.Fatalf("while locked: runs = %+v, want one running", r)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	// The retry waits on the engine clock: move it until the run is recorded.
	eventually(t, "the run recorded", func() bool {
		h.clock.Advance(50 * time.Millisecond)
		r := runsOf(t, h.j, "daily")
		return len(r) == 1 && r[0].Outcome != journal.OutcomeRunning
	})
	r := runsOf(t, h.j, "daily")[0]
	if r.Outcome != journal.OutcomeFailed || r.ExitCode == nil || *r.ExitCode != 3 || r.Finished == nil {
		t.Fatalf("run = %+v, want failed with exit code 3", r)
	}
	if !strings.Contains(log.String(), "run recorded after retrying") {
		t.Errorf("log lacks the recovery line:\n%s", log.String())
	}
}
