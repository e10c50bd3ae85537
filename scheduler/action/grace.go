package action

import (
	"context"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
)

// maxGraceBackoff caps the wait between the connection attempts of WithNetworkGrace: a network
// that comes back is found within 15 s.
const maxGraceBackoff = 15 * time.Second

// WithNetworkGrace wraps a (a watch or ping, possibly WithRetries) so that a run that cannot
// connect (Result.NoConnection) is tried again, waiting 1 s, 2 s, 4 s … up to 15 s between
// attempts on clock (nil: the real clock), until it connects or grace has passed since the run
// began. It is meant for catch-up runs right after a wake, when the network is often still
// coming up: the run then ends as one Result, with Attempts counting every attempt, instead of
// a failure. A run that still has no connection when grace ends returns its last failure, with
// a note. It never waits past ctx's deadline (the routine's timeout), nor after ctx is done.
func WithNetworkGrace(a Action, grace time.Duration, clock clockwork.Clock) Action {
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	return &graceful{inner: a, grace: grace, clock: clock}
}

type graceful struct {
	inner Action
	grace time.Duration
	clock clockwork.Clock
}

func (g *graceful) Run(ctx context.Context, in Input) Result {
	began := g.clock.Now()
	end := began.Add(g.grace)
	if d, ok := ctx.Deadline(); ok && d.Before(end) {
		end = d
	}
	attempts := 0
	for wait := firstBackoff; ; wait = min(2*wait, maxGraceBackoff) {
		attemptIn := in
		if in.Timeout > 0 {
			attemptIn.Timeout = max(in.Timeout-g.clock.Since(began), time.Nanosecond)
		}
		res := g.inner.Run(ctx, attemptIn)
		attempts += max(res.Attempts, 1)
		res.Attempts = attempts
		if !res.NoConnection || ctx.Err() != nil {
			return res
		}
		if !g.clock.Now().Add(wait).Before(end) {
			res.Summary += fmt.Sprintf(" (still no connection after %s of network_grace, %d attempts)", g.clock.Since(began).Round(time.Second), attempts)
			return res
		}
		t := g.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res
		case <-t.Chan():
		}
	}
}
