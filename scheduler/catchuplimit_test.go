package scheduler

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
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
	var waiters sync.WaitGroup // a waiter reports its admission before it releases
	wait := func(name string, slot time.Time, done chan struct{}) {
		waiters.Go(func() {
			if rel, ok := l.acquire(done, name, slot); ok {
				admitted <- name
				rel()
			} else {
				admitted <- "cancelled " + name
			}
		})
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
	waiters.Wait()
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

// A catch-up waiting for the limiter has not claimed its slot: a later slot of its routine due
// meanwhile must not be recorded (skipped, overlap) ahead of it, or a new owner taking over
// before the claim would start its catch-up after that later row and never see the waiting slot
// (found by the chaos test). Such slots are held, as while a claim is written, and the gate's
// refusal or the engine's end keeps them unclaimed for whoever owns next.
func TestWaitingCatchUpHoldsLaterSlots(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[defaults]\nmax_parallel_catch_up = 1\n\n"+
		"[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n"+
		"[[routine]]\nname = \"x\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	h.advance(2*time.Minute, time.Minute) // 08:01 and 08:02 ran
	h.stop()

	h2 := newHarnessOn(t, h, start.Add(5*time.Minute+30*time.Second)) // down over 08:03 … 08:05
	h2.act.block = make(chan struct{})
	h2.act.started = make(chan string, 8)
	h2.start()
	h2.act.waitStarted(t) // a's catch-up (08:05, first by name) runs; x's waits for the limiter
	h2.clock.Advance(time.Minute)
	time.Sleep(200 * time.Millisecond) // x's 08:06 timer has fired and been dispatched
	for _, row := range slotRows(t, h2.j, "x") {
		if strings.HasPrefix(row, "06-01 08:06") {
			t.Fatalf("x's 08:06 recorded %q while x's catch-up of 08:05 waited unclaimed", row)
		}
	}
	h2.gate.admitting.Store(false) // the owner yields before x's catch-up claims
	close(h2.act.block)
	h2.stop()

	h3 := newHarnessOn(t, h2, start.Add(6*time.Minute+30*time.Second))
	h3.start()
	waitRows(t, h3.j, "x", "06-01 08:01 schedule success", "06-01 08:02 schedule success",
		"06-01 08:03 catch-up missed superseded by a later slot", "06-01 08:04 catch-up missed superseded by a later slot",
		"06-01 08:05 catch-up missed superseded by a later slot", "06-01 08:06 catch-up success")
}

// A catch-up holds its routine's later slots from the instant it is dispatched, not from when its
// goroutine first runs: under Wine that goroutine ran late enough for a slot due meanwhile to be
// recorded skipped (overlap) ahead of the unclaimed catch-up. With one P the goroutine cannot
// run before the second dispatch returns, so this test sees that window every time.
func TestCatchUpHoldsSlotsFromDispatch(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 30, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"x\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.act.block = make(chan struct{})
	h.act.started = make(chan string, 4)
	e := h.start()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	e.dispatch("x", slotEvent{slot: start.Add(-20 * time.Second), trigger: journal.TriggerCatchUp})
	e.dispatch("x", slotEvent{slot: start.Add(-10 * time.Second), trigger: journal.TriggerCatchUp})
	e.mu.Lock()
	run := e.routines["x"].running
	claiming, held := run != nil && run.claiming, 0
	if run != nil {
		held = len(run.held)
	}
	e.mu.Unlock()
	if !claiming || held != 1 {
		t.Fatalf("after two dispatches: claiming %v, %d slot(s) held; want the first catch-up claiming and the second held (rows %q)",
			claiming, held, slotRows(t, h.j, "x"))
	}
	h.act.waitStarted(t)
	close(h.act.block)
	h.stop()
}
