package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// flakyHub is a Coordinator whose hub is down until up is set: each Claim while it is down waits
// for the test (answer) and then fails with ErrHubUnreachable; once up, every Claim is won.
type flakyHub struct {
	answer chan struct{}
	mu     sync.Mutex
	up     bool
	asked  []time.Time // the slot of each Claim, in order
}

func (c *flakyHub) Start(string, uint64, func(string, time.Time, string, string), func(string, Anchor)) error {
	return nil
}
func (c *flakyHub) Stop()                                        {}
func (c *flakyHub) Device() string                               { return "laptop" }
func (c *flakyHub) Release(HubClaim, string)                     {}
func (c *flakyHub) Publish(map[string]string, map[string]Anchor) {}
func (c *flakyHub) LocalWhenOffline() bool                       { return false }
func (c *flakyHub) Anchors(context.Context, map[string]time.Duration, map[string]time.Time, time.Time) map[string]time.Time {
	return nil
}

func (c *flakyHub) Claim(ctx context.Context, routine string, slot time.Time, _ time.Duration) (HubClaim, error) {
	c.mu.Lock()
	c.asked = append(c.asked, slot)
	up := c.up
	c.mu.Unlock()
	if up {
		return HubClaim{Verdict: HubWon, Device: "laptop", Routine: routine, Slot: slot}, nil
	}
	select {
	case <-c.answer:
	case <-ctx.Done():
		return HubClaim{}, ctx.Err()
	}
	return HubClaim{}, fmt.Errorf("%w: connection refused", ErrHubUnreachable)
}

// claims returns how many Claims have been asked.
func (c *flakyHub) claims() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.asked)
}

// A slot due while a catch-up waits for an unreachable hub is held behind it; when the hub
// refuses the catch-up, the held slot is kept with it, and once the hub is back one of them
// runs and the other is recorded missed. Neither is lost without a record.
func TestSlotHeldBehindARefusedHubClaimIsNotLost(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"r\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	hub := &flakyHub{answer: make(chan struct{})}
	h.coord = hub
	e := h.start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("the routine's timer was not armed: %v", err)
	}
	s1, s2 := start.Add(time.Minute), start.Add(2*time.Minute)

	h.clock.Advance(time.Minute) // s1: its scheduled run asks the hub, which is down
	eventually(t, "the hub asked for s1", func() bool { return hub.claims() == 1 })
	hub.answer <- struct{}{}
	// Kept as refused, s1 comes back within a poll as a catch-up, which asks the hub again.
	eventually(t, "s1's catch-up asking the hub", func() bool { return hub.claims() == 2 })

	h.clock.Advance(time.Minute) // s2 is due while s1's catch-up waits: held behind it
	eventually(t, "s2 dispatched", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.routines["r"].dispatched.Equal(s2)
	})
	hub.mu.Lock()
	hub.up = true // the hub comes back after it has refused the catch-up below
	hub.mu.Unlock()
	hub.answer <- struct{}{}

	eventually(t, "both slots recorded", func() bool { return len(runsOf(t, h.j, "r")) == 2 })
	got := map[time.Time]string{}
	for _, r := range runsOf(t, h.j, "r") {
		got[r.Slot.UTC()] = r.Outcome
	}
	if got[s1] != journal.OutcomeMissed || !slices.Contains([]string{journal.OutcomeSuccess, journal.OutcomeRunning}, got[s2]) {
		t.Errorf("journal %v: want s1 %s missed (superseded) and s2 %s run as the catch-up", got, s1, s2)
	}
}
