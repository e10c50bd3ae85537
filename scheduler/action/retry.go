package action

import (
	"context"
	"time"

	"github.com/jonboulle/clockwork"
)

// Backoff between attempts: 1 s, 2 s, 4 s, ... doubling up to maxBackoff: exponential
// backoff inside the run's timeout budget.
const (
	firstBackoff = time.Second
	maxBackoff   = 30 * time.Second
)

// WithRetries wraps a so that a failed or timed-out attempt is tried again up to retries more
// times (retries is 0..MaxRetries; values outside are clamped). Waits between attempts double
// from 1 s (1 s, 2 s, 4 s, ...) up to 30 s, measured on clock (nil: the real clock).
//
// The whole run keeps one budget: the earlier of ctx's deadline and clock.Now()+in.Timeout at
// the start (so an engine on a fake clock must give ctx a deadline on the same clock, e.g. with
// clockwork.WithTimeout). A retry whose backoff would end at or past the budget is not tried,
// nor one after ctx is done: the wrapper never sleeps past the deadline. Each attempt gets the
// remaining budget as its Input.Timeout.
//
// Only OutcomeFailed and OutcomeTimeout are retried; success, changed, selector-missing,
// crashed (could not start) and interrupted end the run at once. The Result is the last
// attempt's, with Attempts = the number of attempts made.
func WithRetries(a Action, retries int, clock clockwork.Clock) Action {
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	return &retrying{inner: a, retries: min(max(retries, 0), MaxRetries), clock: clock}
}

type retrying struct {
	inner   Action
	retries int
	clock   clockwork.Clock
}

func (r *retrying) Run(ctx context.Context, in Input) Result {
	end, bounded := ctx.Deadline()
	if in.Timeout > 0 {
		if e := r.clock.Now().Add(in.Timeout); !bounded || e.Before(end) {
			end, bounded = e, true
		}
	}
	for attempt := 1; ; attempt++ {
		attemptIn := in
		if bounded {
			attemptIn.Timeout = max(end.Sub(r.clock.Now()), time.Nanosecond)
		}
		res := r.inner.Run(ctx, attemptIn)
		res.Attempts = attempt
		if attempt > r.retries || !retryable(res.Outcome) {
			return res
		}
		wait := backoff(attempt)
		if bounded && !r.clock.Now().Add(wait).Before(end) {
			res.Summary += " (no time left in the timeout for another attempt)"
			return res
		}
		if !r.sleep(ctx, wait) {
			return res
		}
	}
}

// sleep waits d on the clock; false if ctx ended first.
func (r *retrying) sleep(ctx context.Context, d time.Duration) bool {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.Chan():
		return true
	}
}

// backoff is the wait after the given (1-based) failed attempt.
func backoff(attempt int) time.Duration {
	d := firstBackoff
	for i := 1; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

func retryable(outcome string) bool {
	return outcome == OutcomeFailed || outcome == OutcomeTimeout
}
