package scheduler

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// An idle owner's poller looks at the journal when a write is reported, a few more times spaced
// ever wider while the write's commit may still be on its way, and then rests: what else the
// watch reported of the same commit starts no further wait, and a write that changes nothing a
// look can see (a checkpoint, a rolled-back write) costs the same few looks, not one every
// pollEvery. An owner running a routine every 10 s was looking twice a second all day (perf of
// the tray app, 2026-12-02).
func TestThePollerRestsAfterAWrite(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1h\"\nrun = [\"/bin/true\"]\n", start)
	h.pollEvery = 50 * time.Millisecond
	h.commitWait = time.Second
	e := h.start()
	eventually(t, "the start settled", func() bool { return e.idle() })
	time.Sleep(1500 * time.Millisecond) // the start's own writes and the looks after them

	// Two commits a few milliseconds apart, as a run's claim and its record are.
	before := e.looked.Load()
	if err := h.j.SetPaused("a", "by the test", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if err := h.j.SetPaused("a", "by the test, again", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pause seen", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.pauses["a"].Note == "by the test, again"
	})
	time.Sleep(3 * time.Second)
	// 20, 70, 170, 370, 770 and 1000 ms after the first write; a second series if the second
	// write's notice came after the first look (a slow fsync); one every 50 ms for the window
	// would be 20 or more.
	if n := e.looked.Load() - before; n < 2 || n > 12 {
		t.Errorf("the poller looked %d times in the 3 s after two writes, want 2 to 12", n)
	}
	// And then it rests.
	before = e.looked.Load()
	time.Sleep(2 * time.Second)
	if n := e.looked.Load() - before; n != 0 {
		t.Errorf("the poller looked %d times in 2 s with nothing written, want none", n)
	}

	// A write that commits nothing: journal.db's first byte written again as it is.
	f, err := os.OpenFile(filepath.Join(h.dir, "journal.db"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before = e.looked.Load()
	if _, err := f.WriteAt([]byte("S"), 0); err != nil { // "SQLite format 3\x00"
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if n := e.looked.Load() - before; n < 1 || n > 8 {
		t.Errorf("after a write that committed nothing the poller looked %d times in 3 s, want 1 to 8", n)
	}
}

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
	j, err := journal.Open(filepath.Join(dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
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
		eventually(t, "the pause seen", func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.pauses["a"].Note == "by the test"
		})
		// … and a request that becomes visible after that look, with no notice of its own.
		id, err := other.RequestRun("a")
		if err != nil {
			t.Fatal(err)
		}
		served(t, h, id)
	})
}
