package owning

import (
	"context"
	"sync"

	"github.com/routinely/routinely/scheduler"
)

// exitNow is the set of engines Serve runs under a context made by WithExitNow: what an "exit
// now" (a second stop signal) must end before the process exits.
type exitNow struct {
	mu      sync.Mutex
	engines map[*scheduler.Engine]bool
	ending  bool // endRuns was called: an engine that starts later is ended at once
}

type exitNowKey struct{}

// WithExitNow returns a context derived from ctx that carries a registry of the engines Serve
// runs under it (or under contexts derived from it), and endRuns, which makes each of them end
// the processes of its runs in flight — their process groups and every process carrying a run's
// token, including those that left the group (scheduler.Engine.EndRunsNow) — and returns once
// they are gone (about 6 s at most when a process ignores SIGTERM; at once with no run in
// flight). Call endRuns just before the process exits without draining: the runs then do not
// outlive it, and the next owner records them interrupted as after a crash. Safe to call more
// than once and from any goroutine.
func WithExitNow(ctx context.Context) (_ context.Context, endRuns func()) {
	x := &exitNow{engines: map[*scheduler.Engine]bool{}}
	return context.WithValue(ctx, exitNowKey{}, x), x.endRuns
}

// endRuns ends the runs in flight of every engine registered (see WithExitNow).
func (x *exitNow) endRuns() {
	x.mu.Lock()
	x.ending = true
	engines := make([]*scheduler.Engine, 0, len(x.engines))
	for eng := range x.engines {
		engines = append(engines, eng)
	}
	x.mu.Unlock()
	var wg sync.WaitGroup
	for _, eng := range engines {
		wg.Add(1)
		go func() { defer wg.Done(); eng.EndRunsNow() }()
	}
	wg.Wait()
}

// register adds eng to the registry of ctx, if it has one, and returns the func that removes it
// (call it once eng has stopped). An engine registered after endRuns was called ends its runs at
// once.
func register(ctx context.Context, eng *scheduler.Engine) (unregister func()) {
	x, _ := ctx.Value(exitNowKey{}).(*exitNow)
	if x == nil {
		return func() {}
	}
	x.mu.Lock()
	x.engines[eng] = true
	ending := x.ending
	x.mu.Unlock()
	if ending {
		eng.EndRunsNow()
	}
	return func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		delete(x.engines, eng)
	}
}
