package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/hub/hubserver"
	"github.com/routinely/routinely/scheduler"
)

// restart stops s and, once the device d no longer reaches it and down has passed (the devices'
// liveness keys expire meanwhile), starts a hub on the same store and address.
func restart(t *testing.T, s *hubserver.Server, store string, d *device, down time.Duration) *hubserver.Server {
	t.Helper()
	listen := s.URL[len("nats://"):]
	s.Shutdown()
	stopped := time.Now()
	eventually(t, 5*time.Second, d.Device()+" to notice the hub is gone", func() bool {
		_, err := d.Claim(context.Background(), "probe", slot0, time.Hour)
		return errors.Is(err, scheduler.ErrHubUnreachable)
	})
	time.Sleep(time.Until(stopped.Add(down)))
	return startHub(t, store, listen)
}

// After the hub restarts, having been away longer than the liveness TTL, a device's first claim
// comes after its liveness key is back (the key's revision is lower than the claimed run key's),
// so no other device settles that live run as interrupted; three restarts in a row.
func TestAfterAHubRestartLivenessComesBeforeAnyClaim(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	laptop := join(t, s, "laptop", "j-laptop", 1, "")
	desktop := join(t, s, "desktop", "j-desktop", 1, "")
	for round := range 3 {
		s = restart(t, s, store, laptop, 3*time.Second)
		slot := slot0.Add(time.Duration(round) * time.Minute)
		// The claim of a catch-up, as soon as the laptop is back on the hub.
		var won scheduler.HubClaim
		deadline := time.Now().Add(15 * time.Second)
		for {
			c, err := laptop.Claim(context.Background(), "backup", slot, time.Hour)
			if err == nil {
				won = c
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the laptop did not claim within 15 s of the restart: %v", round, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if won.Verdict != scheduler.HubWon {
			t.Fatalf("round %d: claim %+v", round, won)
		}
		if live := laptop.LivenessRev(); live == 0 || live >= won.Rev {
			t.Fatalf("round %d: the laptop's liveness key put at revision %d, its run key claimed at %d: want the liveness first", round, live, won.Rev)
		}
		time.Sleep(3 * time.Second) // over the 2 s TTL: a settle would have come
		if got := desktop.settledRuns(); len(got) != 0 {
			t.Fatalf("round %d: the desktop settled %v, a run the laptop is still running", round, got)
		}
		if got := claim(t, desktop, "backup", slot.Add(30*time.Second)); got.Verdict != scheduler.HubBusy {
			t.Fatalf("round %d: the desktop's claim while the laptop runs: %+v, want busy", round, got)
		}
		laptop.Release(won, "success")
	}
	s.Shutdown()
}

// ghost is a device driven by hand through its own NATS connection: its liveness key and its run.
type ghost struct {
	t  *testing.T
	nc *nats.Conn
	js jetstream.JetStream
	kv jetstream.KeyValue
}

func newGhost(t *testing.T, s *hubserver.Server) *ghost {
	t.Helper()
	nc, err := nats.Connect(s.URL, nats.Token(s.Token))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), hub.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return &ghost{t: t, nc: nc, js: js, kv: kv}
}

// live publishes the ghost's liveness key with ttl, as a device's loop does.
func (g *ghost) live(ttl time.Duration) {
	g.t.Helper()
	_, err := g.js.PublishMsg(context.Background(), &nats.Msg{Subject: "$KV." + hub.Bucket + ".device.id-ghost",
		Data: []byte(`{"device":"id-ghost","name":"ghost","journal":"j-ghost","epoch":1}`)}, jetstream.WithMsgTTL(ttl))
	if err != nil {
		g.t.Fatal(err)
	}
}

// A device whose run outlives a hub restart, and whose liveness key expired while the hub was
// away, gets a whole liveness TTL after another device sees the hub again to publish the key
// again: that device does not settle the run as interrupted meanwhile. A device that does not
// come back is settled once that TTL has passed.
func TestAfterAHubRestartADeviceGetsATTLToComeBack(t *testing.T) {
	const ttl = 3 * time.Second
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	desktop := &device{}
	desktop.Client = hub.New(hub.Options{URL: s.URL, Token: s.Token, ID: "id-desktop", Device: "desktop", LivenessTTL: ttl,
		PID: os.Getpid(), Logger: quiet(t)})
	if err := desktop.Start("j-desktop", 1, func(routine string, slot time.Time, device, reason string) {
		desktop.mu.Lock()
		desktop.settled = append(desktop.settled, fmt.Sprintf("%s@%s on %s", routine, slot.UTC().Format(time.RFC3339), device))
		desktop.mu.Unlock()
	}, nil); err != nil {
		t.Fatal(err)
	}
	defer desktop.Stop()

	g := newGhost(t, s)
	g.live(ttl)
	run, _ := json.Marshal(map[string]any{"device": "id-ghost", "name": "ghost", "journal": "j-ghost", "epoch": 1, "slot": slot0})
	if _, err := g.kv.Put(context.Background(), "run.backup", run); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the desktop to see the ghost's run", func() bool {
		c, err := desktop.Claim(context.Background(), "backup", slot0.Add(time.Minute), time.Hour)
		return err == nil && c.Verdict == scheduler.HubBusy && c.Device == "ghost"
	})
	g.nc.Close()

	s = restart(t, s, store, desktop, ttl+time.Second)
	defer s.Shutdown()
	eventually(t, 15*time.Second, "the desktop to be back on the hub", func() bool {
		_, err := desktop.Claim(context.Background(), "probe", slot0, time.Hour)
		return err == nil
	})
	back := time.Now()
	// The ghost reconnects slower than the desktop: within the TTL, but well after the desktop's
	// watcher has delivered the hub's keys, its key not among them.
	time.Sleep(2200 * time.Millisecond)
	g = newGhost(t, s)
	stop := make(chan struct{})
	refreshed := make(chan struct{})
	go func() {
		defer close(refreshed)
		for {
			g.live(ttl)
			select {
			case <-stop:
				return
			case <-time.After(ttl / 4):
			}
		}
	}()
	time.Sleep(time.Until(back.Add(2 * ttl)))
	if got := desktop.settledRuns(); len(got) != 0 {
		close(stop)
		<-refreshed
		t.Fatalf("the desktop settled %v within a TTL of seeing the hub again: the ghost was coming back", got)
	}
	if c := claim(t, desktop, "backup", slot0.Add(time.Minute)); c.Verdict != scheduler.HubBusy {
		t.Fatalf("the desktop's claim while the ghost runs: %+v, want busy", c)
	}

	// The ghost stops for good: its run is settled once its key expires.
	close(stop)
	<-refreshed
	eventually(t, 2*ttl, "the ghost's run to be settled", func() bool { return len(desktop.settledRuns()) > 0 })
	if got, want := desktop.settledRuns(), "backup@2026-12-01T08:30:00Z on ghost"; len(got) != 1 || got[0] != want {
		t.Fatalf("settled %v, want [%s]", got, want)
	}
}

// olderDevice drives, through g, a device of a version before ids: its liveness key is
// device.<name>, and its run's holder names it by name. It refreshes every ttl/4 until stop.
func olderDevice(t *testing.T, g *ghost, name string, ttl time.Duration, stop <-chan struct{}) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, err := g.js.PublishMsg(context.Background(), &nats.Msg{Subject: "$KV." + hub.Bucket + ".device." + name,
				Data: []byte(`{"device":"` + name + `","journal":"j-` + name + `","epoch":1,"version":"old"}`)}, jetstream.WithMsgTTL(ttl))
			if err != nil {
				t.Errorf("older device's liveness: %v", err)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(ttl / 4):
			}
		}
	}()
	return done
}

// A device of the version before ids (keyed by its name) on the same hub: its live run is seen
// as live, not settled (both versions look a run's device up under the key its holder names);
// a device of this version taking its name is refused, unless it has its journal (the same
// device, upgraded); once it stops answering, its run is settled as before.
func TestAnOlderDeviceKeyedByNameIsSeenAlive(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	g := newGhost(t, s)
	stop := make(chan struct{})
	done := olderDevice(t, g, "oldbox", 2*time.Second, stop)
	run, _ := json.Marshal(map[string]any{"device": "oldbox", "journal": "j-oldbox", "epoch": 1, "slot": slot0})
	if _, err := g.kv.Put(context.Background(), "run.backup", run); err != nil {
		t.Fatal(err)
	}
	desktop := join(t, s, "desktop", "j-desktop", 1, "")
	time.Sleep(3 * time.Second) // over the 2 s TTL, watched from the start
	if got := desktop.settledRuns(); len(got) != 0 {
		t.Fatalf("settled %v: the older device is alive", got)
	}
	if c := claim(t, desktop, "backup", slot0.Add(time.Minute)); c.Verdict != scheduler.HubBusy || c.Device != "oldbox" {
		t.Fatalf("claim while the older device runs: %+v, want busy on oldbox", c)
	}

	other := hub.New(hub.Options{URL: s.URL, Token: s.Token, ID: "id-new", Device: "oldbox", LivenessTTL: 2 * time.Second, Logger: quiet(t)})
	if err := other.Start("j-new", 1, nil, nil); !errors.Is(err, hub.ErrNameTaken) {
		t.Fatalf("another device called oldbox: %v, want ErrNameTaken", err)
	}

	close(stop)
	<-done
	eventually(t, 10*time.Second, "the older device's run to be settled", func() bool { return len(desktop.settledRuns()) > 0 })
	if got, want := desktop.settledRuns(), "backup@2026-12-01T08:30:00Z on oldbox"; len(got) != 1 || got[0] != want {
		t.Fatalf("settled %v, want [%s]", got, want)
	}

	// An older device killed and started again upgraded, within its key's TTL: its own journal,
	// so no clash.
	stop = make(chan struct{})
	done = olderDevice(t, g, "attic", 2*time.Second, stop)
	close(stop)
	<-done
	upgraded := hub.New(hub.Options{URL: s.URL, Token: s.Token, ID: "id-attic", Device: "attic", LivenessTTL: 2 * time.Second, Logger: quiet(t)})
	if err := upgraded.Start("j-attic", 2, nil, nil); err != nil {
		t.Fatalf("the older device itself, upgraded: %v", err)
	}
	upgraded.Stop()
}

// A request that timed out marks the hub unreachable (claims fail at once), and the hub answering
// the next liveness refresh clears it, although the connection never dropped: a refresh that
// timed out across a hub restart is noted after the reconnect, which had cleared the earlier
// note, and left the device refusing every claim until the next reconnect.
func TestATimedOutRequestIsClearedWhenTheHubAnswers(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	laptop := join(t, s, "laptop", "j-laptop", 1, "")
	claim(t, laptop, "warm-up", slot0)
	laptop.NoteTimeout()
	if _, err := laptop.Claim(context.Background(), "backup", slot0, time.Hour); !errors.Is(err, scheduler.ErrHubUnreachable) {
		t.Fatalf("claim right after a timeout: %v, want ErrHubUnreachable", err)
	}
	eventually(t, 5*time.Second, "claims to be decided again", func() bool {
		_, err := laptop.Claim(context.Background(), "backup", slot0, time.Hour)
		return err == nil
	})
}
