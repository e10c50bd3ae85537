//go:build linux || windows

package ownership

import (
	"errors"
	"testing"
	"time"
)

// A journal check that fails (journal.db deleted or replaced) stops admission at the next
// heartbeat, says journal-replaced in owner.json (what observers read) and closes the watch's
// channel, once; JournalRestored admits again.
func TestJournalCheckStopsAdmissionUntilRestored(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, HeartbeatInterval: 50 * time.Millisecond})
	var calls, fail = make(chan struct{}, 100), make(chan struct{})
	gone := h.WatchJournal(func() error {
		calls <- struct{}{}
		select {
		case <-fail:
			return errors.New("journal.db was deleted or replaced while open: gone")
		default:
			return nil
		}
	})
	<-calls // checked by the heartbeat
	if !h.Admitting() {
		t.Fatal("not admitting while the journal check passes")
	}
	close(fail)
	select {
	case <-gone:
	case <-time.After(long):
		t.Fatal("the watch's channel not closed after the check failed")
	}
	if h.Admitting() {
		t.Fatal("admitting with the journal replaced")
	}
	if _, err := h.BeginRun("r", time.Now()); !errors.Is(err, ErrNotAdmitting) {
		t.Fatalf("BeginRun with the journal replaced: %v; want ErrNotAdmitting", err)
	}
	eventually(t, long, "journal-replaced seen by an observer", func() bool {
		st, _ := Inspect(dir)
		return len(st.Diagnoses) == 1 && st.Diagnoses[0].Kind == DiagJournalReplaced && !st.Healthy()
	})
	for len(calls) > 0 {
		<-calls
	}
	time.Sleep(200 * time.Millisecond) // four heartbeats
	if n := len(calls); n != 0 {
		t.Errorf("the check was called %d times after it failed; want none until the next WatchJournal", n)
	}
	h.JournalRestored()
	if !h.Admitting() {
		t.Fatal("not admitting after JournalRestored")
	}
	eventually(t, long, "healthy again", func() bool {
		st, _ := Inspect(dir)
		return st.Healthy()
	})
}
