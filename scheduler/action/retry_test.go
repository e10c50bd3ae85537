//go:build unix

package action

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// countingScript is a real shell action that fails until it has run succeedOn times (0: never),
// counting its runs in a file. It needs the returned env in Input.Env.
func countingScript(t *testing.T, succeedOn int) (a Action, env []string, runs func() int) {
	t.Helper()
	counter := filepath.Join(t.TempDir(), "count")
	a, err := New(ShellSpec{Script: `n=$(cat "$COUNTER" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$COUNTER"; echo "attempt $n"; [ "$SUCCEED_ON" -ne 0 ] && [ $n -ge "$SUCCEED_ON" ]`}, Deps{KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	env = []string{"COUNTER=" + counter, "SUCCEED_ON=" + strconv.Itoa(succeedOn)}
	runs = func() int {
		b, _ := os.ReadFile(counter)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	return a, env, runs
}

func runAsync(a Action, ctx context.Context, in Input) <-chan Result {
	done := make(chan Result, 1)
	go func() { done <- a.Run(ctx, in) }()
	return done
}

// advanceAfterWait waits until the retry loop sleeps on the fake clock, then moves time by d.
func advanceAfterWait(t *testing.T, fc *clockwork.FakeClock, d time.Duration) {
	t.Helper()
	if err := blockUntil(fc, 1); err != nil {
		t.Fatalf("retry loop never waited: %v", err)
	}
	fc.Advance(d)
}

// blockUntil waits (at most 20 s of real time) until n timers wait on fc.
func blockUntil(fc *clockwork.FakeClock, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return fc.BlockUntilContext(ctx, n)
}

func TestRetriesFailTwiceThenSucceed(t *testing.T) {
	t.Parallel()
	inner, env, runs := countingScript(t, 3)
	fc := clockwork.NewFakeClock()
	done := runAsync(WithRetries(inner, 3, fc), context.Background(), Input{Routine: "flaky", Env: env, Timeout: time.Minute})

	// First backoff is 1 s: 999 ms is not enough for a second attempt.
	advanceAfterWait(t, fc, 999*time.Millisecond)
	select {
	case res := <-done:
		t.Fatalf("finished before the 1 s backoff elapsed: %+v", res)
	case <-time.After(100 * time.Millisecond):
	}
	if n := runs(); n != 1 {
		t.Fatalf("%d attempts before the backoff elapsed, want 1", n)
	}
	fc.Advance(time.Millisecond)
	advanceAfterWait(t, fc, 2*time.Second) // second backoff is 2 s

	res := <-done
	if res.Outcome != OutcomeSuccess || res.Attempts != 3 || runs() != 3 {
		t.Fatalf("got outcome %q attempts %d (script ran %d times), want success after 3", res.Outcome, res.Attempts, runs())
	}
	if !strings.Contains(string(res.Output), "attempt 3") {
		t.Fatalf("output %q is not the last attempt's", res.Output)
	}
}

func TestRetriesStopInsideTheTimeoutBudget(t *testing.T) {
	t.Parallel()
	inner, env, runs := countingScript(t, 0)
	fc := clockwork.NewFakeClock()
	// Budget 2.5 s: attempt 1, wait 1 s, attempt 2, then a 2 s wait would pass the budget.
	done := runAsync(WithRetries(inner, 5, fc), context.Background(), Input{Env: env, Timeout: 2500 * time.Millisecond})
	advanceAfterWait(t, fc, time.Second)
	res := <-done
	if res.Outcome != OutcomeFailed || res.Attempts != 2 || runs() != 2 {
		t.Fatalf("got outcome %q attempts %d (ran %d), want failed after 2", res.Outcome, res.Attempts, runs())
	}
	if !strings.Contains(res.Summary, "no time left") {
		t.Fatalf("summary %q does not say why retrying stopped", res.Summary)
	}
}

func TestRetriesUseTheContextDeadlineOnTheSameClock(t *testing.T) {
	t.Parallel()
	inner, env, runs := countingScript(t, 0)
	fc := clockwork.NewFakeClock()
	ctx, cancel := clockwork.WithTimeout(context.Background(), fc, 1500*time.Millisecond)
	defer cancel()
	done := runAsync(WithRetries(inner, 5, fc), ctx, Input{Env: env})
	// One 1 s backoff fits in 1.5 s; the 2 s one does not.
	if err := blockUntil(fc, 2); err != nil { // the context's timer + the backoff timer
		t.Fatal(err)
	}
	fc.Advance(time.Second)
	res := <-done
	if res.Attempts != 2 || runs() != 2 {
		t.Fatalf("attempts %d (ran %d), want 2 within the context deadline", res.Attempts, runs())
	}
}

func TestRetriesStopWhenCancelledDuringBackoff(t *testing.T) {
	t.Parallel()
	inner, env, runs := countingScript(t, 0)
	fc := clockwork.NewFakeClock()
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(WithRetries(inner, 5, fc), ctx, Input{Env: env, Timeout: time.Hour})
	if err := blockUntil(fc, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	res := <-done
	if res.Attempts != 1 || runs() != 1 {
		t.Fatalf("attempts %d (ran %d), want 1: no retry after cancel", res.Attempts, runs())
	}
}

func TestOnlyFailuresAreRetried(t *testing.T) {
	t.Parallel()
	for _, outcome := range []string{OutcomeSuccess, OutcomeChanged, OutcomeSelectorMissing, OutcomeCrashed} {
		calls := 0
		a := WithRetries(actionFunc(func(context.Context, Input) Result { calls++; return Result{Outcome: outcome} }), 5, clockwork.NewFakeClock())
		if res := a.Run(context.Background(), Input{}); res.Attempts != 1 || calls != 1 {
			t.Errorf("%s: attempts %d calls %d, want 1", outcome, res.Attempts, calls)
		}
	}
}

func TestBackoffDoublesAndIsCapped(t *testing.T) {
	t.Parallel()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := backoff(i + 1); got != w {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
}

// actionFunc adapts a function to Action (for outcome classification only).
type actionFunc func(context.Context, Input) Result

func (f actionFunc) Run(ctx context.Context, in Input) Result { return f(ctx, in) }
