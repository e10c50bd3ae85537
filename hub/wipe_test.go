package hub_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/routinely/routinely/hub/hubserver"
	"github.com/routinely/routinely/scheduler"
)

// wipe stops s, deletes its JetStream store (the bucket and every key in it; the token stays)
// and starts a hub on the same address again.
func wipe(t *testing.T, s *hubserver.Server, store string) *hubserver.Server {
	t.Helper()
	listen := s.URL[len("nats://"):]
	s.Shutdown()
	if err := os.RemoveAll(filepath.Join(store, "jetstream")); err != nil {
		t.Fatal(err)
	}
	return startHub(t, store, listen)
}

// hubAnchor returns the hub's anchor of routine, zero when it has none.
func hubAnchor(t *testing.T, s *hubserver.Server, routine string) time.Time {
	t.Helper()
	g := newGhost(t, s)
	defer g.nc.Close()
	e, err := g.kv.Get(context.Background(), "anchor."+routine)
	if err != nil {
		return time.Time{}
	}
	var a struct {
		Anchor time.Time `json:"anchor"`
	}
	_ = json.Unmarshal(e.Value(), &a)
	return a.Anchor
}

// A wiped hub store loses the shared every-anchor: the devices that armed the routine publish
// their grid again from what they armed (their journals), so a device arming next gets that grid,
// not a new one; and a later grid armed meanwhile elsewhere is drift: the earliest is kept, the
// hub takes it back and the device on the later grid moves to it (the move callback), the others
// stay where they are.
func TestAWipedHubGetsTheDevicesGridBack(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	every := map[string]time.Duration{"tick": 7 * time.Second}
	t0 := time.Date(2026, 12, 1, 8, 0, 3, 0, time.UTC)
	laptop := join(t, s, "laptop", "j-laptop", 1, "")
	desktop := join(t, s, "desktop", "j-desktop", 1, "")
	a0 := laptop.Anchors(context.Background(), every, nil, t0)["tick"]
	if got := desktop.Anchors(context.Background(), every, nil, t0.Add(2*time.Second))["tick"]; !got.Equal(a0) || !a0.Equal(t0) {
		t.Fatalf("anchors %v and %v, want both %v", a0, got, t0)
	}
	armed := map[string]scheduler.Anchor{"tick": {Every: every["tick"], At: a0}}
	laptop.Publish(nil, armed)
	desktop.Publish(nil, armed)

	s = wipe(t, s, store)
	defer func() { s.Shutdown() }()
	eventually(t, 15*time.Second, "the devices to publish their grid again", func() bool { return hubAnchor(t, s, "tick").Equal(a0) })
	studio := join(t, s, "studio", "j-studio", 1, "")
	if got := studio.Anchors(context.Background(), every, nil, t0.Add(time.Hour+3*time.Second))["tick"]; !got.Equal(a0) {
		t.Fatalf("a device arming after the wipe got anchor %v, want the devices' %v", got, a0)
	}

	// Wiped again, and a device armed another grid meanwhile (here: the studio, 3 s off the
	// 7 s grid, while the hub had none).
	s = wipe(t, s, store)
	later := a0.Add(time.Hour + 3*time.Second)
	studio.Publish(nil, map[string]scheduler.Anchor{"tick": {Every: every["tick"], At: later}})
	eventually(t, 15*time.Second, "the studio to move to the earliest grid", func() bool {
		m := studio.moves()
		return len(m) > 0 && m[len(m)-1] == "tick@"+a0.Format(time.RFC3339)
	})
	studio.Publish(nil, armed) // as the engine does once it has re-armed
	time.Sleep(2 * time.Second)
	if got := hubAnchor(t, s, "tick"); !got.Equal(a0) {
		t.Fatalf("the hub's anchor after the drift: %v, want the earliest %v", got, a0)
	}
	if m := append(laptop.moves(), desktop.moves()...); len(m) != 0 {
		t.Fatalf("the devices on the earliest grid moved: %v", m)
	}
}

// A claim tells when the hub's store began, so the engine can refuse to run a slot from before
// a wipe (scheduler.HubClaim.Since): a hub restarted on its store keeps that time (its claims
// are all still there), a hub started again on a wiped store has a later one.
func TestAClaimSaysWhenTheHubsStoreBegan(t *testing.T) {
	store := newStore(t)
	before := time.Now()
	s := startHub(t, store, "127.0.0.1:0")
	laptop := join(t, s, "laptop", "j-laptop", 1, "")
	first := claim(t, laptop, "tick", slot0)
	if first.Since.Before(before.Add(-time.Second)) || first.Since.After(time.Now()) {
		t.Fatalf("the store began at %v, want between %v and now", first.Since, before)
	}
	s = restart(t, s, store, laptop, 0)
	var again scheduler.HubClaim
	eventually(t, 10*time.Second, "the laptop to reconnect", func() bool {
		var err error
		again, err = laptop.Claim(context.Background(), "tick", slot0.Add(time.Minute), time.Hour)
		return err == nil
	})
	if !again.Since.Equal(first.Since) {
		t.Fatalf("after a restart on the same store it began at %v, want %v as before", again.Since, first.Since)
	}
	wiped := time.Now()
	s = wipe(t, s, store)
	defer s.Shutdown()
	var after scheduler.HubClaim
	eventually(t, 10*time.Second, "the laptop to reconnect to the wiped hub", func() bool {
		var err error
		after, err = laptop.Claim(context.Background(), "tick", slot0.Add(2*time.Minute), time.Hour)
		return err == nil
	})
	if after.Since.Before(wiped) {
		t.Fatalf("after a wipe at %v the store began at %v, want later", wiped, after.Since)
	}
}
