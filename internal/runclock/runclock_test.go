package runclock

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package if a watcher outlives the spans that started it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A wait in which the process runs (a sleep, as SQLite's busy handler sleeps while another
// process holds the lock) counts in full.
func TestARunningWaitCountsInFull(t *testing.T) {
	s := Start()
	time.Sleep(1200 * time.Millisecond)
	if d := s.End(); d < 1200*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("End = %v after sleeping 1.2 s, want 1.2 s", d)
	}
}

// Spans overlap: each measures from its own start, and the watcher ends with the last.
func TestSpansOverlap(t *testing.T) {
	a := Start()
	time.Sleep(200 * time.Millisecond)
	b := Start()
	time.Sleep(200 * time.Millisecond)
	if d := b.End(); d < 200*time.Millisecond || d > 350*time.Millisecond {
		t.Errorf("the later span: %v, want about 200 ms", d)
	}
	if d := a.Elapsed(); d < 400*time.Millisecond || d > 550*time.Millisecond {
		t.Errorf("the earlier span, still open: %v, want about 400 ms", d)
	}
	first := a.End()
	if again := a.End(); again < first {
		t.Errorf("End again = %v, less than the first %v", again, first)
	}
	mu.Lock()
	n := open
	mu.Unlock()
	if n != 0 {
		t.Errorf("%d spans open after both ended (a second End closed another's?)", n)
	}
}

// AfterFunc calls f once the span has measured d, and not at all once stopped.
func TestAfterFunc(t *testing.T) {
	s := Start()
	defer s.End()
	called := make(chan time.Duration, 1)
	stop := s.AfterFunc(300*time.Millisecond, func() { called <- s.Elapsed() })
	defer stop()
	select {
	case d := <-called:
		if d < 300*time.Millisecond {
			t.Errorf("called at %v, before 300 ms", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("not called within 2 s")
	}
	never := s.AfterFunc(200*time.Millisecond, func() { t.Error("called after stop") })
	never()
	time.Sleep(400 * time.Millisecond)
}
