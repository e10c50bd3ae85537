// Package runclock measures how long a wait in this process took while the process was running:
// real time minus the spans in which it did not run at all — stopped (SIGSTOP, Ctrl-Z on a
// terminal daemon, a debugger), its virtual machine paused, or starved by a machine too loaded to
// schedule it. The scheduler judges a journal write slow by this measure: a claim that took 10 s
// because the owner was stopped for 9.9 s of it says nothing about the journal
// (docs/design.md#55-journal-trouble).
//
// Go's monotonic clock keeps counting while a process is stopped (on Linux it stops only in a
// system suspend, see clock_gettime(2) CLOCK_MONOTONIC), so a stop shows up as a gap: a ticker
// that should fire every tick fires once, late. The ticker runs only while a Span is open, so an
// idle process pays nothing for it.
package runclock

import (
	"sync"
	"time"
)

const (
	// tick is how often the watcher looks at the clock while a span is open.
	tick = 50 * time.Millisecond
	// gap: a tick this late means the process did not run. A busy machine delays a tick by
	// milliseconds; shorter stalls are not told apart from running time, which only makes a
	// wait look longer than it was, never shorter.
	gap = 500 * time.Millisecond
)

// The watcher's state, one per process: a stop stops every goroutine at once.
var (
	mu      sync.Mutex
	open    int           // spans open; the watcher runs while it is above 0
	last    time.Time     // when the watcher last looked at the clock
	stalled time.Duration // the stalls seen since the watcher started, less a tick each
	quit    chan struct{} // closed to end the watcher
)

// Span is one measured wait, from Start to End.
type Span struct {
	began    time.Time
	stalled0 time.Duration // stalledLocked at began
	ended    bool
}

// Start opens a span at the current time and starts the watcher if no span was open. End the
// span (End) when the wait is over, or the watcher keeps ticking.
func Start() *Span {
	mu.Lock()
	defer mu.Unlock()
	now := time.Now()
	if open == 0 {
		last, stalled, quit = now, 0, make(chan struct{})
		go watch(quit)
	}
	open++
	return &Span{began: now, stalled0: stalledLocked(now)}
}

// Elapsed returns the real time since Start (ns resolution, monotonic) less the stalls seen since
// then, including one still going on (the watcher has not run since the process was continued).
// It is never negative. After End it returns what End returned.
func (s *Span) Elapsed() time.Duration {
	mu.Lock()
	defer mu.Unlock()
	return s.elapsedLocked(time.Now())
}

// End closes the span and returns Elapsed at that moment. Calling it again returns the same
// measure taken anew; only the first call closes the span.
func (s *Span) End() time.Duration {
	mu.Lock()
	defer mu.Unlock()
	d := s.elapsedLocked(time.Now())
	if !s.ended {
		s.ended = true
		if open--; open == 0 {
			close(quit)
		}
	}
	return d
}

// AfterFunc calls f, in its own goroutine, once the span has measured d (Elapsed ≥ d, so a stop
// delays the call by as long as it lasted), unless stop is called first. Like time.AfterFunc,
// stop does not wait for an f already called. The span must stay open until then or stop; an
// ended span measures on, and the call then comes when Elapsed reaches d.
func (s *Span) AfterFunc(d time.Duration, f func()) (stop func()) {
	quit := make(chan struct{})
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if left := d - s.Elapsed(); left > 0 {
				t.Reset(left)
				continue
			}
			f()
			return
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit) }) }
}

func (s *Span) elapsedLocked(now time.Time) time.Duration {
	d := now.Sub(s.began) - (stalledLocked(now) - s.stalled0)
	return max(d, 0)
}

// stalledLocked is stalled plus the stall going on at now, if the watcher is late by more than
// gap: the same value the watcher will add when it runs, so a reader sees no step either way.
func stalledLocked(now time.Time) time.Duration {
	if late := now.Sub(last); late > gap {
		return stalled + late - tick
	}
	return stalled
}

// watch ticks until q is closed, adding each gap between ticks longer than gap to stalled.
func watch(q chan struct{}) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-q:
			return
		case <-t.C:
		}
		mu.Lock()
		if q != quit {
			// Ended, and another watcher started since: the state is that one's.
			mu.Unlock()
			return
		}
		now := time.Now()
		stalled = stalledLocked(now)
		last = now
		mu.Unlock()
	}
}
