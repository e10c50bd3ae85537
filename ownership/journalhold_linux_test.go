//go:build linux

package ownership

import (
	"errors"
	"testing"
	"time"
)

// An approved takeover waits while the owner's journal is replaced, although no run is in
// flight: the owner holds the only copy of the journal until it has put it back. Once it has
// (JournalRestored), the handover completes.
func TestTakeoverWaitsWhileTheJournalIsReplaced(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, Policy: PolicyAllow, HeartbeatInterval: 50 * time.Millisecond})
	gone := h.WatchJournal(func() error { return errors.New("journal.db was deleted or replaced while open: gone") })
	select {
	case <-gone:
	case <-time.After(long):
		t.Fatal("the journal check never failed")
	}
	ch := startHelper(t, "takeover", dir, envTimeout+"=20000")
	ch.expect("progress approved", long)
	select {
	case <-h.Lost():
		t.Fatalf("handed over while the journal was replaced: %v", h.Err())
	case <-time.After(time.Second): // twenty heartbeats
	}
	if st := h.Status(); st.Record.State != StateYielding {
		t.Errorf("owner state while the handover waits: %s; want yielding", st.Record.State)
	}
	h.JournalRestored()
	ch.expect("owned", long)
	select {
	case <-h.Lost():
	case <-time.After(long):
		t.Fatal("the handle not lost after the handover")
	}
	if !errors.Is(h.Err(), ErrReleased) {
		t.Fatalf("Err after the handover: %v; want ErrReleased", h.Err())
	}
}
