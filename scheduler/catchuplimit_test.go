package scheduler

import (
	"testing"
	"time"
)

// The limiter admits at most max catch-ups at once and the waiting ones in slot order; a
// cancelled waiter leaves the queue, and one cancelled just as it was admitted gives its place
// back.
func TestCatchUpLimiterOrderAndBound(t *testing.T) {
	l := newCatchUpLimiter()
	l.setMax(2)
	base := time.Unix(1000, 0)
	never := make(chan struct{})
	relA, ok := l.acquire(never, "a", base.Add(5*time.Second))
	if !ok {
		t.Fatal("a not admitted while nothing ran")
	}
	relB, _ := l.acquire(never, "b", base.Add(9*time.Second))
	admitted := make(chan string, 3)
	wait := func(name string, slot time.Time, done chan struct{}) {
		go func() {
			if rel, ok := l.acquire(done, name, slot); ok {
				admitted <- name
				rel()
			} else {
				admitted <- "cancelled " + name
			}
		}()
	}
	cancelD := make(chan struct{})
	wait("late", base.Add(3*time.Second), never)
	wait("early", base.Add(1*time.Second), never)
	wait("d", base.Add(2*time.Second), cancelD)
	waitQueued(t, l, 3)
	select {
	case n := <-admitted:
		t.Fatalf("%s admitted while 2 ran", n)
	case <-time.After(50 * time.Millisecond):
	}
	close(cancelD)
	if n := <-admitted; n != "cancelled d" {
		t.Fatalf("got %q, want d cancelled", n)
	}
	relA()
	relA() // a second release is a no-op
	if n := <-admitted; n != "early" {
		t.Fatalf("first admitted after a release: %q, want early (slot 1 s)", n)
	}
	if n := <-admitted; n != "late" {
		t.Fatalf("then %q, want late", n)
	}
	relB()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running != 0 || len(l.waiting) != 0 {
		t.Fatalf("after all released: running %d, waiting %d", l.running, len(l.waiting))
	}
}

// waitQueued waits until n catch-ups wait in l.
func waitQueued(t *testing.T, l *catchUpLimiter, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		l.mu.Lock()
		k := len(l.waiting)
		l.mu.Unlock()
		if k == n {
			return
		}
	}
	t.Fatalf("%d catch-ups never queued", n)
}
