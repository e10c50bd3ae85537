//go:build linux

package torture

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTortureDevices is the multi-device chaos run: `routinely hub` and three devices, each a
// home with an owning daemon and a standby, share an every-1s routine. At random the driver
// SIGKILLs a device's owner (its standby takes over, a new standby starts), SIGSTOPs one for 1–6
// s, SIGKILLs the hub and starts it again on the same store after 0.5–3 s, and wipes the hub's
// store (SIGTERM, its JetStream directory deleted, started again after 0.5–3 s; half the time
// with a device's owner asleep through it and SIGKILLed as the hub returns at once, so that its
// standby catches up a slot the others ran just before the wipe), and lets a holder of the hub's
// token forge claims (unsigned, or signed by an unknown key) for the next slots and the run key,
// and delete past slots' claims: the devices have credentials of their own (docs/design.md §9.8).
// Afterwards: no
// slot ran twice (across devices and owners), every run in the output is one device's success,
// and no two devices both record a success for one slot. Duration and seed as for TestTorture.
func TestTortureDevices(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos run skipped under -short")
	}
	duration := 60 * time.Second
	if v := os.Getenv("ROUTINELY_TORTURE_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("ROUTINELY_TORTURE_DURATION: %v", err)
		}
		duration = d
	}
	seed := time.Now().UnixNano()
	if v := os.Getenv("ROUTINELY_TORTURE_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	rng := rand.New(rand.NewSource(seed))
	// Kept when the run fails: the processes' logs and journals are the evidence.
	dir, err := os.MkdirTemp("", "routinely-torture-devices-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("directory kept for inspection: %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	bin := os.Getenv("ROUTINELY_BIN")
	if bin == "" {
		var err error
		if bin, err = Build(dir); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (rerun with ROUTINELY_TORTURE_SEED=%d), duration %v", seed, seed, duration)
	logf := func(format string, a ...any) {
		t.Logf("%s "+format, append([]any{time.Now().UTC().Format("15:04:05.000")}, a...)...)
	}
	next := 0
	spawn := func(args ...string) *Proc {
		t.Helper()
		next++
		p, err := StartProc(bin, dir, next, args)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if p.Alive() {
				p.Cont()
				p.Kill()
				p.WaitExit(5 * time.Second)
			}
		})
		return p
	}
	store := filepath.Join(dir, "hub-store")
	urlRE := regexp.MustCompile(`Hub listening on (nats://\S+)`)
	startHub := func(listen string) (*Proc, string) {
		t.Helper()
		h := spawn("hub", "--listen", listen, "--store", store)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if log, err := os.ReadFile(h.LogPath); err == nil {
				if m := urlRE.FindSubmatch(log); m != nil {
					return h, string(m[1])
				}
			}
		}
		t.Fatalf("the hub did not start: %s", h.LogPath)
		return nil, ""
	}
	hub, url := startHub("127.0.0.1:0")
	listen := strings.TrimPrefix(url, "nats://")
	token, err := os.ReadFile(filepath.Join(store, "hub.token"))
	if err != nil {
		t.Fatal(err)
	}
	forged := map[int64]bool{} // the future slots that got a forged claim
	out := filepath.Join(dir, "slots.txt")
	devices := []string{"laptop", "desktop", "server"}
	homes := map[string]string{}
	procs := map[string][]*Proc{}
	for _, dev := range devices {
		home := filepath.Join(dir, dev)
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		// Each device has credentials of its own (docs/design.md §9.8); the hub's token is
		// the forger's.
		if b, err := exec.Command(bin, "hub", "add-device", dev, "--store", store).CombinedOutput(); err != nil {
			t.Fatalf("hub add-device %s: %v: %s", dev, err, b)
		}
		creds, err := os.ReadFile(filepath.Join(store, "devices", dev+".creds"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf(`[hub]
url = %q
credentials_file = "device.creds"
device = %q
liveness_ttl = "3s"

[[routine]]
name = "tick"
every = "1s"
timeout = "5s"
shell = 'echo "$ROUTINELY_SLOT $ROUTINELY_DEVICE" >> %q'
`, url, dev, out)
		if err := os.WriteFile(filepath.Join(home, "routines.toml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "device.creds"), creds, 0o600); err != nil {
			t.Fatal(err)
		}
		homes[dev] = home
		for range 2 { // an owner and a standby
			procs[dev] = append(procs[dev], spawn("--home", home, "daemon", "--wait"))
		}
	}
	alive := func(dev string) []*Proc {
		var a []*Proc
		for _, p := range procs[dev] {
			if p.Alive() {
				a = append(a, p)
			}
		}
		return a
	}
	end := time.Now().Add(duration)
	counts := map[string]int{}
	for time.Now().Before(end) {
		time.Sleep(time.Duration(1000+rng.Intn(2000)) * time.Millisecond)
		dev := devices[rng.Intn(len(devices))]
		switch n := rng.Intn(12); {
		case n < 4: // SIGKILL one of the device's daemons (often its owner), start a new one
			if a := alive(dev); len(a) > 0 {
				p := a[rng.Intn(len(a))]
				logf("SIGKILL %s pid %d", dev, p.PID())
				p.Kill()
				p.WaitExit(5 * time.Second)
				counts["kill"]++
			}
			procs[dev] = append(procs[dev], spawn("--home", homes[dev], "daemon", "--wait"))
		case n < 7: // SIGSTOP one for 1–6 s (a sleeping laptop)
			if a := alive(dev); len(a) > 0 {
				p := a[rng.Intn(len(a))]
				d := time.Duration(1000+rng.Intn(5000)) * time.Millisecond
				logf("SIGSTOP %s pid %d for %s", dev, p.PID(), d)
				p.Stop()
				time.AfterFunc(d, p.Cont)
				counts["stop"]++
			}
		case n < 9: // SIGKILL the hub; start it again on the same store
			d := time.Duration(500+rng.Intn(2500)) * time.Millisecond
			logf("SIGKILL hub pid %d, back in %s", hub.PID(), d)
			hub.Kill()
			hub.WaitExit(5 * time.Second)
			time.Sleep(d)
			hub, _ = startHub(listen)
			logf("hub back: pid %d", hub.PID())
			counts["hub"]++
		case n < 11: // a holder of the hub's token forges claims and a run key, deletes claims
			f, err := forge(url, strings.TrimSpace(string(token)), "tick", rng)
			logf("forge: claims for slots %v, %d run key, %d past claims deleted (err: %v)", f.slots, f.runs, f.deleted, err)
			for _, s := range f.slots {
				forged[s] = true
			}
			counts["forged-claims"] += len(f.slots)
			counts["forged-runs"] += f.runs
			counts["deleted-claims"] += f.deleted
		default: // wipe the hub's store: stop it, delete its JetStream files, start it again
			// As an operator would (and as TestHubWipedStoreKeepsOneGrid does): every claim,
			// run key, liveness key and anchor is gone; hub.token, hub.nk and the devices'
			// credentials stay, so the devices reconnect. The invariants below stay as they are: a slot that ran before the
			// wipe must not run again, and the devices must keep one grid (docs/design.md §9.6).
			d := time.Duration(500+rng.Intn(2500)) * time.Millisecond
			// Half the time a device's owner sleeps through the wipe and dies as the hub comes
			// back at once: its standby, owning, catches up the latest slot, which another
			// device ran just before the wipe and which the empty store no longer knows.
			var sleeper *Proc
			if rng.Intn(2) == 0 {
				sleeper, d = ownerOf(homes[dev], alive(dev)), 0
			}
			if sleeper != nil {
				if !sleeper.IsStopped() {
					logf("SIGSTOP %s owner pid %d through the wipe", dev, sleeper.PID())
					sleeper.Stop()
				}
				// The routine's slots are whole seconds: wipe just after the next one, which
				// the other devices run while this owner sleeps.
				time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 100*time.Millisecond)))
			}
			logf("wipe hub pid %d: SIGTERM, delete its JetStream store, back in %s", hub.PID(), d)
			hub.Term()
			if !hub.WaitExit(10 * time.Second) {
				t.Errorf("hub pid %d did not exit on SIGTERM within 10s", hub.PID())
				hub.Kill()
				hub.WaitExit(5 * time.Second)
			}
			if err := os.RemoveAll(filepath.Join(store, "jetstream")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
			hub, _ = startHub(listen)
			logf("hub back on an empty store: pid %d", hub.PID())
			counts["wipe"]++
			if sleeper != nil {
				logf("SIGKILL %s owner pid %d, asleep through the wipe", dev, sleeper.PID())
				sleeper.Kill()
				sleeper.WaitExit(5 * time.Second)
				procs[dev] = append(procs[dev], spawn("--home", homes[dev], "daemon", "--wait"))
				counts["wipe-sleeper"]++
			}
		}
	}
	time.Sleep(7 * time.Second) // every SIGSTOP has ended; the devices settle
	for _, dev := range devices {
		for _, p := range alive(dev) {
			p.Cont()
			p.Term()
			if !p.WaitExit(30 * time.Second) {
				t.Errorf("%s pid %d did not drain and exit on SIGTERM", dev, p.PID())
			}
		}
	}
	t.Logf("attacks: %v", counts)

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[int64]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("bad output line %q", line)
		}
		slot, err := time.Parse(time.RFC3339, f[0])
		if err != nil {
			t.Fatal(err)
		}
		if prev, twice := ran[slot.Unix()]; twice {
			t.Errorf("slot %s ran twice: on %s and on %s", f[0], prev, f[1])
		}
		ran[slot.Unix()] = f[1]
	}
	success := map[int64]string{}
	records := map[int64][]string{} // forged slot → each device's record of it
	accounted := map[int64]bool{}   // forged slot → a device recorded why it did not run
	for _, dev := range devices {
		cmd := exec.Command(bin, "--home", homes[dev], "history", "tick", "--json", "--limit", "1000000")
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("history of %s: %v", dev, err)
		}
		var runs []struct {
			Slot    time.Time `json:"slot"`
			Outcome string    `json:"outcome"`
			Reason  string    `json:"reason"`
		}
		if err := json.Unmarshal(stdout, &runs); err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if forged[r.Slot.Unix()] {
				records[r.Slot.Unix()] = append(records[r.Slot.Unix()], dev+": "+r.Outcome+" ("+r.Reason+")")
				// A skip for another device's claim is what a forged claim did before claims
				// were signed; it does not account for a slot nobody ran.
				if r.Outcome != "success" && r.Reason != "" && !strings.HasPrefix(r.Reason, "claimed by ") {
					accounted[r.Slot.Unix()] = true
				}
			}
			if r.Outcome != "success" {
				continue
			}
			s := r.Slot.Unix()
			if other, twice := success[s]; twice {
				t.Errorf("slot %s: success on %s and on %s", r.Slot.UTC().Format(time.RFC3339), other, dev)
			}
			success[s] = dev
			if ran[s] != dev {
				t.Errorf("slot %s: %s records success but the output says %q ran it", r.Slot.UTC().Format(time.RFC3339), dev, ran[s])
			}
		}
	}
	// Forged claims must not make slots go unrun: each forged slot ran on some device, or a
	// device recorded why it did not (a fault's, not a claim's, reason).
	forgedRan := 0
	for s := range forged {
		if _, ok := ran[s]; ok {
			forgedRan++
		}
		if _, ok := ran[s]; !ok && !accounted[s] {
			t.Errorf("slot %s had a forged claim and did not run, without a word: records %v",
				time.Unix(s, 0).UTC().Format(time.RFC3339), records[s])
		}
	}
	if len(ran) < int(duration/time.Second)/3 {
		t.Errorf("only %d slots ran in %s", len(ran), duration)
	}
	t.Logf("%d slots ran; %d had forged claims, of which %d ran", len(ran), len(forged), forgedRan)
}

// ownerOf returns the process among procs whose pid home's owner.json names (the device's
// owner), or nil when none does.
func ownerOf(home string, procs []*Proc) *Proc {
	var rec struct {
		PID int `json:"pid"`
	}
	b, err := os.ReadFile(filepath.Join(home, "owner.json"))
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return nil
	}
	for _, p := range procs {
		if p.PID() == rec.PID {
			return p
		}
	}
	return nil
}
