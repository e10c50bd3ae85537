package scheduler

import (
	"runtime"
	"slices"
	"sync"
	"time"
)

// catchUpLimiter admits catch-up runs at most max at a time, the waiting ones in slot order (then
// by routine name), so that a wake after a long sleep, when every routine wants its one catch-up
// at the same instant, starts them a few at a time (max_parallel_catch_up). Each catch-up claims
// its slot only once admitted, so its late_by is the real one. Only catch-ups pass through it.
type catchUpLimiter struct {
	mu      sync.Mutex
	max     int
	running int
	waiting []*catchUpWaiter // sorted by slot, then routine
}

type catchUpWaiter struct {
	slot    time.Time
	routine string
	ready   chan struct{} // closed when admitted
	granted bool          // under mu
}

// newCatchUpLimiter returns a limiter admitting runtime.NumCPU() catch-ups at once.
func newCatchUpLimiter() *catchUpLimiter { return &catchUpLimiter{max: runtime.NumCPU()} }

// setMax sets how many catch-ups may run at once (n ≤ 0: runtime.NumCPU()), admitting waiters
// at once when it grew. Runs already admitted are never cut short when it shrank.
func (l *catchUpLimiter) setMax(n int) {
	if n <= 0 {
		n = runtime.NumCPU()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max = n
	l.admitLocked()
}

// acquire waits until the catch-up of routine's slot may run, or done is closed. It returns the
// release to call when the run ends (it may be called more than once) and true; or nil and
// false when done closed first, having given back an admission granted meanwhile.
func (l *catchUpLimiter) acquire(done <-chan struct{}, routine string, slot time.Time) (release func(), ok bool) {
	w := &catchUpWaiter{slot: slot, routine: routine, ready: make(chan struct{})}
	l.mu.Lock()
	i, _ := slices.BinarySearchFunc(l.waiting, w, compareWaiters)
	l.waiting = slices.Insert(l.waiting, i, w)
	l.admitLocked()
	l.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(l.release) }
	select {
	case <-w.ready:
		return release, true
	case <-done:
	}
	l.mu.Lock()
	granted := w.granted
	if !granted {
		l.waiting = slices.DeleteFunc(l.waiting, func(x *catchUpWaiter) bool { return x == w })
	}
	l.mu.Unlock()
	if granted {
		release()
	}
	return nil, false
}

// release ends one admitted catch-up and admits the next waiters.
func (l *catchUpLimiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	l.admitLocked()
}

// admitLocked admits waiters, earliest slot first, while fewer than max run. The caller holds mu.
func (l *catchUpLimiter) admitLocked() {
	for l.running < l.max && len(l.waiting) > 0 {
		w := l.waiting[0]
		l.waiting = l.waiting[1:]
		w.granted = true
		l.running++
		close(w.ready)
	}
}

func compareWaiters(a, b *catchUpWaiter) int {
	if c := a.slot.Compare(b.slot); c != 0 {
		return c
	}
	if a.routine < b.routine {
		return -1
	}
	if a.routine > b.routine {
		return 1
	}
	return 0
}
