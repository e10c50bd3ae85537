package scheduler

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
)

// gridHub is a Coordinator that wins every claim, answers no anchor (the engine arms on its own),
// and keeps the move callback and what the engine published, so a test can play the hub's part
// of the every-grid.
type gridHub struct {
	flakyHub
	mu    sync.Mutex
	move  func(string, Anchor)
	armed []map[string]Anchor
}

func (c *gridHub) Start(_ string, _ uint64, _ func(string, time.Time, string, string), move func(string, Anchor)) error {
	c.mu.Lock()
	c.move = move
	c.mu.Unlock()
	return nil
}

func (c *gridHub) Publish(_ map[string]string, armed map[string]Anchor) {
	c.mu.Lock()
	c.armed = append(c.armed, armed)
	c.mu.Unlock()
}

func (c *gridHub) lastArmed() map[string]Anchor {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.armed) == 0 {
		return nil
	}
	return c.armed[len(c.armed)-1]
}

// The hub's move of a shared every-routine to the devices' earliest grid (after a wiped hub,
// another grid was armed here) re-arms it on that grid: persisted in the journal, published as
// armed, and the next slot is the new grid's. A move of another interval changes nothing.
func TestMoveAnchorReArmsOnTheDevicesGrid(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"r\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	hub := &gridHub{flakyHub: flakyHub{up: true}}
	h.coord = hub
	h.start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("the routine's timer was not armed: %v", err)
	}
	if got := hub.lastArmed()["r"]; got.Every != time.Minute || !got.At.Equal(start) {
		t.Fatalf("published armed grid %+v, want every 1m from %s", got, start)
	}
	hub.mu.Lock()
	move := hub.move
	hub.mu.Unlock()

	move("r", Anchor{Every: 2 * time.Minute, At: start.Add(-30 * time.Second)}) // another interval
	if got := hub.lastArmed()["r"]; !got.At.Equal(start) {
		t.Fatalf("a move of another interval re-armed the routine on %s", got.At)
	}

	earlier := start.Add(-30 * time.Second)
	move("r", Anchor{Every: time.Minute, At: earlier})
	if got := hub.lastArmed()["r"]; !got.At.Equal(earlier) {
		t.Fatalf("published armed grid after the move %+v, want from %s", got, earlier)
	}
	anchors, err := h.j.Anchors(&config.Config{Routines: []*config.Routine{{Name: "r", Kind: config.KindEvery, Every: time.Minute}}})
	if err != nil || !anchors["r"].Equal(earlier) {
		t.Fatalf("journal anchor after the move %v, %v; want %s", anchors["r"], err, earlier)
	}
	if err := h.clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("the routine's timer was not armed again: %v", err)
	}
	h.clock.Advance(30 * time.Second)
	next := start.Add(30 * time.Second)
	eventually(t, "the new grid's slot "+next.String()+" claimed", func() bool {
		hub.flakyHub.mu.Lock()
		defer hub.flakyHub.mu.Unlock()
		return len(hub.flakyHub.asked) > 0 && hub.flakyHub.asked[0].Equal(next)
	})
}
