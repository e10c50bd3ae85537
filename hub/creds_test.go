package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/hub/hubserver"
	"github.com/routinely/routinely/scheduler"
)

// credsFor makes credentials for name, signed with the key of the hub whose store is store, and
// lists them in its devices/, as `routinely hub add-device` does.
func credsFor(t *testing.T, store, name string) *hub.Creds {
	t.Helper()
	key, err := hub.LoadHubKey(store)
	if err != nil {
		t.Fatal(err)
	}
	data, err := hub.MakeCreds(key, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(store, hubserver.DevicesDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, hubserver.DevicesDir, name+".creds"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := hub.ParseCreds(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// joinSigned is join for a device with credentials: it connects with its key, not the token.
func joinSigned(t *testing.T, s *hubserver.Server, creds *hub.Creds, journal string) *device {
	t.Helper()
	d := &device{}
	d.Client = hub.New(hub.Options{URL: s.URL, ID: "id-" + journal, Creds: creds, Device: creds.Name,
		LivenessTTL: 2 * time.Second, Version: "test", Logger: quiet(t)})
	if err := d.Start(journal, 1, func(routine string, slot time.Time, device, reason string) {
		d.mu.Lock()
		d.settled = append(d.settled, routine+"@"+slot.UTC().Format(time.RFC3339)+" on "+device)
		d.mu.Unlock()
	}, nil); err != nil {
		t.Fatalf("join %s: %v", creds.Name, err)
	}
	t.Cleanup(d.Stop)
	return d
}

func claimKeyOf(routine string, slot time.Time) string {
	return "claim." + routine + "." + strconv.FormatInt(slot.UnixNano(), 10)
}

// A holder of the hub's token (and no device's credentials) writes claims for the coming slots:
// unsigned ones naming a real device and its journal, one signed by a key of its own under a
// "hub key" of its own, a real device's signed claim copied to another slot, and a run key of a
// device that does not exist. Devices with credentials ignore and report each, claim the slots
// over them, and every slot is still won by exactly one device. Before claims were signed, every
// forged claim made both devices skip its slot.
func TestForgedClaimsAreIgnoredAndReported(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	defer s.Shutdown()
	devs := []*device{
		joinSigned(t, s, credsFor(t, store, "laptop"), "j-laptop"),
		joinSigned(t, s, credsFor(t, store, "desktop"), "j-desktop"),
	}
	g := newGhost(t, s)
	ctx := context.Background()
	put := func(key string, v any) {
		t.Helper()
		data, _ := json.Marshal(v)
		if _, err := g.kv.Put(ctx, key, data); err != nil {
			t.Fatal(err)
		}
	}
	// Slot 0 is won honestly; its signed claim is the one copied to slot 5.
	first := claim(t, devs[0], "briefing", slot0)
	if first.Verdict != scheduler.HubWon {
		t.Fatalf("slot 0: %+v", first)
	}
	devs[0].Release(first, "success")
	real, err := g.kv.Get(ctx, claimKeyOf("briefing", slot0))
	if err != nil {
		t.Fatal(err)
	}
	// A key pair and a "hub key" of the forger's own: the claim verifies under its own key.
	fakeHub, _ := nkeys.CreateAccount()
	fake, err := hub.MakeCreds(fakeHub, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	forgerCreds, err := hub.ParseCreds(fake)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		slot := slot0.Add(time.Duration(i) * time.Minute)
		switch i {
		case 1, 2: // unsigned, naming the desktop and its journal
			put(claimKeyOf("briefing", slot), map[string]any{"device": "id-j-desktop", "name": "desktop", "journal": "j-desktop", "epoch": 1, "slot": slot})
		case 3, 4: // signed by a key the hub never signed
			if _, err := g.kv.Put(ctx, claimKeyOf("briefing", slot), hub.SignedHolder(forgerCreds, "briefing", "j-forger", slot)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := g.kv.Put(ctx, claimKeyOf("briefing", slot0.Add(5*time.Minute)), real.Value()); err != nil {
		t.Fatal(err)
	}
	// A run key of a device that does not exist, for an earlier slot: "busy" on it would make
	// the overlap policy skip the slots.
	g.live(time.Minute)
	put("run.briefing", map[string]any{"device": "id-ghost", "name": "ghost", "journal": "j-ghost", "epoch": 1, "slot": slot0.Add(-time.Minute)})

	for i := 1; i <= 6; i++ {
		slot := slot0.Add(time.Duration(i) * time.Minute)
		res := make([]scheduler.HubClaim, len(devs))
		var wg sync.WaitGroup
		for k, d := range devs {
			wg.Go(func() { res[k] = claim(t, d, "briefing", slot) })
		}
		wg.Wait()
		won := -1
		for k, c := range res {
			if c.Verdict == scheduler.HubWon {
				if won >= 0 {
					t.Fatalf("slot %d: won by both devices", i)
				}
				won = k
			}
		}
		if won < 0 {
			t.Fatalf("slot %d: nobody won (a forged claim counted): %+v", i, res)
		}
		for k, c := range res {
			if k != won && (c.Verdict != scheduler.HubElsewhere || c.Device != devs[won].Device()) {
				t.Fatalf("slot %d: %s got %+v, want elsewhere on %s", i, devs[k].Device(), c, devs[won].Device())
			}
		}
		devs[won].Release(res[won], "success")
	}
	var reported []string
	for _, d := range devs {
		reported = append(reported, d.Snapshot().Ignored...)
		if len(d.settledRuns()) != 0 {
			t.Errorf("%s settled a forged run: %v", d.Device(), d.settledRuns())
		}
	}
	got := strings.Join(reported, "\n")
	for i := 1; i <= 5; i++ {
		if !strings.Contains(got, claimKeyOf("briefing", slot0.Add(time.Duration(i)*time.Minute))) {
			t.Errorf("no device reports the forged claim of slot %d; they report:\n%s", i, got)
		}
	}
	if !strings.Contains(got, "run.briefing: unsigned") {
		t.Errorf("no device reports the forged run key; they report:\n%s", got)
	}
}

// connectAs connects to s with creds' key, as a device with credentials does; the error is the
// connection's.
func connectAs(t *testing.T, s *hubserver.Server, creds *hub.Creds) (jetstream.JetStream, jetstream.KeyValue, error) {
	t.Helper()
	nc, err := nats.Connect(s.URL, nats.Nkey(creds.Public(), creds.SignNonce), nats.MaxReconnects(0),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})) // the permission violations expected
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), hub.Bucket)
	return js, kv, err
}

// A device's credentials let it write its own liveness key and the claim, run and anchor keys,
// but not another device's liveness key, nor delete the bucket's stream; a removed device (its
// credentials file gone from the store) and a key the hub never listed cannot connect.
func TestADeviceWritesOnlyItsOwnLiveness(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	defer s.Shutdown()
	laptop, desktop := credsFor(t, store, "laptop"), credsFor(t, store, "desktop")
	ctx := context.Background()
	// A denied write gets no answer: each gives up after a second.
	denied := func() context.Context {
		c, cancel := context.WithTimeout(ctx, time.Second)
		t.Cleanup(cancel)
		return c
	}
	js, kv, err := connectAs(t, s, laptop)
	if err != nil {
		t.Fatalf("the laptop connects with its key: %v", err)
	}
	for _, key := range []string{"device." + laptop.ID, "claim.backup.1", "run.backup", "anchor.backup"} {
		if _, err := kv.Put(ctx, key, []byte(`{}`)); err != nil {
			t.Errorf("the laptop writes %s: %v", key, err)
		}
	}
	if _, err := kv.Put(denied(), "device."+desktop.ID, []byte(`{"device":"`+desktop.ID+`"}`)); err == nil {
		t.Errorf("the laptop wrote the desktop's liveness key")
	}
	if _, err := kv.Put(denied(), "member.x", []byte(`{}`)); err == nil {
		t.Errorf("the laptop wrote a key outside claim, run, anchor and its own device key")
	}
	if err := js.DeleteStream(denied(), "KV_"+hub.Bucket); err == nil {
		t.Errorf("the laptop deleted the bucket's stream")
	}
	if _, err := kv.Get(ctx, "claim.backup.1"); err != nil {
		t.Errorf("the laptop reads a claim: %v", err)
	}

	fakeHub, _ := nkeys.CreateAccount()
	data, _ := hub.MakeCreds(fakeHub, "mallory")
	mallory, err := hub.ParseCreds(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := connectAs(t, s, mallory); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("a key the hub never listed connects: %v", err)
	}
	if err := os.Remove(filepath.Join(store, hubserver.DevicesDir, "desktop.creds")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := connectAs(t, s, desktop); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("a removed device connects: %v", err)
	}
}

// A claim key deleted after its device won the slot (by anyone who may write claim keys: the
// token, any device) does not let another device claim the slot again, as one catching up would:
// the slot register still has the claim, and it can be neither purged nor its record deleted.
// Before the register, the desktop won the slot a second time.
func TestADeletedClaimDoesNotRunTheSlotAgain(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	defer s.Shutdown()
	laptopCreds := credsFor(t, store, "laptop")
	laptop := joinSigned(t, s, laptopCreds, "j-laptop")
	desktop := joinSigned(t, s, credsFor(t, store, "desktop"), "j-desktop")
	won := claim(t, laptop, "backup", slot0)
	if won.Verdict != scheduler.HubWon {
		t.Fatalf("laptop claims: %+v", won)
	}
	laptop.Release(won, "success")
	g := newGhost(t, s)
	ctx := context.Background()
	if err := g.kv.Delete(ctx, claimKeyOf("backup", slot0)); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, desktop, "backup", slot0); got.Verdict != scheduler.HubElsewhere || got.Device != "laptop" {
		t.Fatalf("desktop claims the slot after its claim key was deleted: %+v, want elsewhere on laptop", got)
	}
	if got := claim(t, laptop, "backup", slot0); got.Verdict != scheduler.HubWon {
		t.Fatalf("laptop claims its own slot again: %+v, want won (its local journal then decides)", got)
	}
	reg, err := g.js.Stream(ctx, hub.SlotStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Purge(ctx); err == nil {
		t.Errorf("the token purged the slot register")
	}
	if err := reg.DeleteMsg(ctx, 1); err == nil {
		t.Errorf("the token deleted a record of the slot register")
	}
	js, _, err := connectAs(t, s, laptopCreds)
	if err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := js.DeleteStream(dctx, hub.SlotStream); err == nil {
		t.Errorf("a device deleted the slot register")
	}
}
