package scheduler

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
	waitPauseSeen(t, e, "a", "by the test, again")
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

// waitPauseSeen waits until e's poller has read routine's pause with note from the journal.
func waitPauseSeen(t *testing.T, e *Engine, routine, note string) {
	t.Helper()
	eventually(t, "the pause seen", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.pauses[routine].Note == note
	})
}
