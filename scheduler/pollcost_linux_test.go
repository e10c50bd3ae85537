package scheduler

// Linux only: inotify reports a write only in the directory of the path it was made through,
// which is how these tests make a commit the owner's watch never reports.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// unreported opens the journal of h through hard links in another directory: its writes reach
// the same files (and SQLite's locks and shared memory, which follow the inode), but the owner's
// watch on h.dir never reports them. That is what the owner sees of a commit whose only notice
// came before the watch existed, or was spent by a look that saw another commit while this one
// was still being synced.
func unreported(t *testing.T, h *harness) *journal.Journal {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"journal.db", "journal.db-wal", "journal.db-shm"} {
		if err := os.Link(filepath.Join(h.dir, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return openJournal(t, dir)
}

// A run-now request whose commit no look saw when its write was reported is still served: the
// poller keeps looking for commitWait after the watch is set up and after each reported write,
// even when a look in between saw another change. Before, `run --here` on a loaded machine
// waited 15 s for a request the owner found only at its 30 s safety net (CI, 2026-12-06): the
// request was under way while the owner's watch was being set up.
func TestACommitSeenLateIsStillServed(t *testing.T) {
	// start runs an engine with commitWait (0: the engine's 10 s) and returns it with its
	// harness and a journal handle whose writes the engine's watch does not report.
	start := func(t *testing.T, commitWait time.Duration) (*harness, *Engine, *journal.Journal) {
		t.Helper()
		h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1h\"\nrun = [\"/bin/true\"]\n",
			time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
		h.pollEvery = 50 * time.Millisecond
		h.commitWait = commitWait
		e := h.start()
		other := unreported(t, h)
		eventually(t, "the start settled", func() bool { return e.idle() })
		return h, e, other
	}
	// served waits for request id to be answered with a run, for less than the 30 s safety net.
	served := func(t *testing.T, h *harness, id int64) {
		t.Helper()
		eventually(t, "the request served", func() bool {
			run, err := h.j.RequestResult(id)
			return err == nil && run != 0
		})
	}

	t.Run("just after the start", func(t *testing.T) {
		h, _, other := start(t, 0)
		id, err := other.RequestRun("a")
		if err != nil {
			t.Fatal(err)
		}
		served(t, h, id)
	})

	t.Run("after a look saw another commit", func(t *testing.T) {
		h, e, other := start(t, 2*time.Second)
		time.Sleep(2500 * time.Millisecond) // past the looks after the watch's setup

		// A reported commit, and the look after it seeing it …
		if err := h.j.SetPaused("a", "by the test", nil); err != nil {
			t.Fatal(err)
		}
		waitPauseSeen(t, e, "a", "by the test")
		// … and a request that becomes visible after that look, with no notice of its own.
		id, err := other.RequestRun("a")
		if err != nil {
			t.Fatal(err)
		}
		served(t, h, id)
	})
}
