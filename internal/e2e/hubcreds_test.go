//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// signedDeviceHome is deviceHome for a device with credentials and no token: `routinely hub
// add-device NAME` on the hub's store, the file copied beside routines.toml and named in
// credentials_file.
func signedDeviceHome(t *testing.T, h *hubProc, store, device, routines string) string {
	t.Helper()
	home := newHome(t, fmt.Sprintf("[hub]\nurl = %q\ncredentials_file = \"device.creds\"\nliveness_ttl = %q\n%s",
		h.url, livenessTTL.String(), routines))
	stdout, stderr, code := run(t, home, "hub", "add-device", device, "--store", store)
	if code != 0 {
		t.Fatalf("hub add-device %s: exit %d: %s", device, code, stderr)
	}
	if !strings.Contains(stdout, `credentials_file = "`+device+`.creds"`) {
		t.Errorf("add-device does not say what to put in [hub]:\n%s", stdout)
	}
	data, err := os.ReadFile(filepath.Join(store, "devices", device+".creds"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "device.creds"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// A holder of the hub's token (a forging NATS client, no device's credentials) writes claims for
// the coming slots of a shared routine, naming one of the devices, and a run key of a device
// that does not exist. Devices with credentials ignore them, say so in status, and still run
// every slot exactly once. Before claims were signed, each forged claim made both devices skip
// its slot (history blaming the device it named) and the run key made them skip as "running".
func TestHubForgedClaimsAreIgnored(t *testing.T) {
	const period = 2 * time.Second
	h, store, out, routines := sharedTickHub(t, "2s", "2s")
	homeA := signedDeviceHome(t, h, store, "laptop", routines)
	homeB := signedDeviceHome(t, h, store, "desktop", routines)
	a := start(t, homeA, "daemon")
	waitOwner(t, homeA, a.pid())
	b := start(t, homeB, "daemon")
	waitOwner(t, homeB, b.pid())
	waitBothDevicesUp(t, homeA)
	ran := func() map[int64][]string { return slotsRan(t, out) }
	var last int64
	for deadline := time.Now().Add(5 * period); last == 0; time.Sleep(50 * time.Millisecond) {
		for slot := range ran() {
			last = max(last, slot)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot ran within %s", 5*period)
		}
	}

	// The forger: the hub's token, a raw client. The claims name the desktop and its journal
	// as the desktop's own would, unsigned; the next 5 slots from two ahead (one may be under
	// way).
	nc, err := nats.Connect(h.url, nats.Token(h.token))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, "routinely")
	if err != nil {
		t.Fatal(err)
	}
	var desktop map[string]any
	keys, _ := kv.ListKeys(ctx)
	for k := range keys.Keys() {
		if e, err := kv.Get(ctx, k); err == nil && strings.HasPrefix(k, "device.") && strings.Contains(string(e.Value()), `"desktop"`) {
			_ = json.Unmarshal(e.Value(), &desktop)
		}
	}
	if desktop == nil {
		t.Fatal("the desktop's liveness key is not on the hub")
	}
	step := int64(period / time.Second)
	now := time.Now().Unix()
	first := last + ((now-last)/step+2)*step
	var forged []int64
	for i := range int64(5) {
		slot := first + i*step
		forged = append(forged, slot)
		v, _ := json.Marshal(map[string]any{"device": desktop["device"], "name": "desktop", "journal": desktop["journal"],
			"epoch": desktop["epoch"], "slot": time.Unix(slot, 0).UTC()})
		if _, err := kv.Put(ctx, "claim.tick."+strconv.FormatInt(time.Unix(slot, 0).UnixNano(), 10), v); err != nil {
			t.Fatal(err)
		}
	}
	v, _ := json.Marshal(map[string]any{"device": desktop["device"], "name": "desktop", "journal": desktop["journal"],
		"epoch": desktop["epoch"], "slot": time.Unix(first-step, 0).UTC()})
	if _, err := kv.Put(ctx, "run.tick", v); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(forged[len(forged)-1], 0).Add(period + time.Second)))

	var ignored []string
	for _, home := range []string{homeA, homeB} {
		s := status(t, home)
		if s.Hub != nil {
			ignored = append(ignored, s.Hub.Ignored...)
		}
	}
	for _, p := range []*proc{a, b} {
		p.stopWith(syscall.SIGTERM)
	}
	h.signal(syscall.SIGTERM)
	h.wait(cmdTimeout)
	slots := ran()
	for slot, devices := range slots {
		if len(devices) > 1 {
			t.Errorf("slot %s ran twice: on %v", time.Unix(slot, 0).UTC().Format(time.RFC3339), devices)
		}
	}
	for _, slot := range forged {
		if len(slots[slot]) != 1 {
			t.Errorf("slot %s with a forged claim ran on %v, want once", time.Unix(slot, 0).UTC().Format(time.RFC3339), slots[slot])
		}
	}
	if got := strings.Join(ignored, "\n"); !strings.Contains(got, "claim.tick.") || !strings.Contains(got, "unsigned") {
		t.Errorf("status does not report the forged claims; it reports:\n%s", got)
	}
}

// The laptop runs a slot while the desktop is stopped; someone deletes that slot's claim key on
// the hub (the token, or any device: a KV delete is a write); the desktop starts and its
// catch-up claims that slot. The slot register still has the laptop's claim: the desktop records
// it skipped and it runs once. Before the register, the desktop's catch-up ran it again.
func TestHubDeletedClaimDoesNotRunTheSlotAgain(t *testing.T) {
	const period = 10 * time.Second
	h, store, out, routines := sharedTickHub(t, "10s", "5s")
	homeA := signedDeviceHome(t, h, store, "laptop", routines)
	homeB := signedDeviceHome(t, h, store, "desktop", routines)
	a := start(t, homeA, "daemon")
	waitOwner(t, homeA, a.pid())
	b := start(t, homeB, "daemon")
	waitOwner(t, homeB, b.pid())
	waitBothDevicesUp(t, homeA)
	ran := func() map[int64][]string { return slotsRan(t, out) }
	// A slot has run with both up (the desktop's journal knows the routine's slots up to it).
	for deadline := time.Now().Add(3 * period); len(ran()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no slot ran within %s", 3*period)
		}
	}
	b.stopWith(syscall.SIGTERM)
	before := len(ran())
	// The next slot runs on the laptop alone; then the laptop stops too, before the one after.
	var slot int64
	for deadline := time.Now().Add(3 * period); slot == 0; time.Sleep(20 * time.Millisecond) {
		if got := ran(); len(got) > before {
			for s, devs := range got {
				if s > slot && len(devs) == 1 && devs[0] == "laptop" {
					slot = s
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the laptop ran no slot alone within %s", 3*period)
		}
	}
	a.stopWith(syscall.SIGTERM)
	nc, err := nats.Connect(h.url, nats.Token(h.token))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, "routinely")
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "claim.tick."+strconv.FormatInt(time.Unix(slot, 0).UnixNano(), 10)); err != nil {
		t.Fatal(err)
	}
	if time.Now().After(time.Unix(slot, 0).Add(period - 2*time.Second)) {
		t.Fatalf("stopping the laptop and deleting the claim took until %s: the desktop's catch-up would meet the next slot, not the one under test", time.Now().UTC().Format(time.RFC3339Nano))
	}
	b = start(t, homeB, "daemon")
	waitOwner(t, homeB, b.pid())
	// The desktop's start pass has claimed the latest slot, the one under test, by now.
	waitStatus(t, homeB, "the desktop on the hub", func(s statusOut) bool { return s.Hub != nil && s.Hub.Connected })
	time.Sleep(time.Until(time.Unix(slot, 0).Add(period - 500*time.Millisecond)))
	b.stopWith(syscall.SIGTERM)
	h.signal(syscall.SIGTERM)
	h.wait(cmdTimeout)
	if devs := ran()[slot]; len(devs) != 1 {
		t.Fatalf("slot %s ran on %v after its claim key was deleted, want once", time.Unix(slot, 0).UTC().Format(time.RFC3339), devs)
	}
}

// `routinely hub remove-device` shuts a device out without restarting the hub: the device's key
// is refused from its next connection, and its status says so and what to do.
func TestHubRemovedDeviceIsRefused(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "hub-store")
	h := startHubProc(t, store, "127.0.0.1:0")
	home := signedDeviceHome(t, h, store, "laptop", hourly)
	stdout, stderr, code := run(t, home, "hub", "remove-device", "laptop", "--store", store)
	if code != 0 || !strings.Contains(stdout, "Device laptop removed") {
		t.Fatalf("hub remove-device: exit %d: %s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(store, "devices", "laptop.creds")); !os.IsNotExist(err) {
		t.Fatalf("laptop.creds is still in the store: %v", err)
	}
	if _, _, code := run(t, home, "hub", "remove-device", "laptop", "--store", store); code != 2 {
		t.Errorf("removing it again: exit %d, want 2", code)
	}
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	s := waitStatus(t, home, "the hub refusing the device", func(s statusOut) bool { return s.Hub != nil && s.Hub.Refused })
	if msg := hubDiagnosis(s); !strings.Contains(msg, "authentication failed") || !strings.Contains(msg, "routinely hub add-device laptop") {
		t.Errorf("status of a removed device says %q, want authentication failed and to run add-device", msg)
	}
	d.signal(syscall.SIGTERM)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon: exit %d on SIGTERM", code)
	}
}
