//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// livenessTTL is the devices' [hub] liveness_ttl in these tests.
const livenessTTL = 3 * time.Second

// hubProc is `routinely hub` running in the background, with the URL it printed.
type hubProc struct {
	*proc
	url   string
	token string
}

var hubURLRE = regexp.MustCompile(`Hub listening on ((?:nats|tls)://\S+)`)

// startHubProc starts `routinely hub --listen listen --store store [more...]` and waits until
// it says where it listens.
func startHubProc(t *testing.T, store, listen string, more ...string) *hubProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"hub", "--listen", listen, "--store", store}, more...)...)
	cmd.Env = testEnv()
	p := startCmd(t, cmd, "routinely hub")
	p.waitStdout("Ctrl-C stops.", ownDeadline)
	m := hubURLRE.FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("hub printed no URL:\n%s", p.stdout.String())
	}
	token, err := os.ReadFile(filepath.Join(store, "hub.token"))
	if err != nil {
		t.Fatal(err)
	}
	return &hubProc{proc: p, url: m[1], token: strings.TrimSpace(string(token))}
}

// deviceHome makes a profile for device on hub h, sharing config (routines) with the others.
func deviceHome(t *testing.T, h *hubProc, device, routines string) string {
	t.Helper()
	home := newHome(t, fmt.Sprintf("[hub]\nurl = %q\ntoken_file = \"hub.token\"\ndevice = %q\nliveness_ttl = %q\n%s",
		h.url, device, livenessTTL.String(), routines))
	if err := os.WriteFile(filepath.Join(home, "hub.token"), []byte(h.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// hubRun is one row of `history --json` as these tests read it.
type hubRun struct {
	Slot    time.Time `json:"slot"`
	Outcome string    `json:"outcome"`
	Reason  string    `json:"reason"`
	Trigger string    `json:"trigger"`
	Device  string    `json:"device"`
}

func hubHistory(t *testing.T, home string) []hubRun {
	t.Helper()
	stdout, stderr, code := run(t, home, "history", "tick", "--json", "--limit", "100000")
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	var runs []hubRun
	if err := json.Unmarshal([]byte(stdout), &runs); err != nil {
		t.Fatalf("history --json: %v\n%s", err, stdout)
	}
	return runs
}

// window is a span of time in which a slot may be missing from the output, with why.
type window struct {
	from, to time.Time
	why      string
}

// timeline notes when each attack began and ended, for the coverage check.
type timeline struct {
	mu    sync.Mutex
	gaps  []window
	start time.Time
}

func (tl *timeline) gap(from, to time.Time, why string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.gaps = append(tl.gaps, window{from, to, why})
}

func (tl *timeline) excused(slot time.Time) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, g := range tl.gaps {
		if !slot.Before(g.from) && !slot.After(g.to) {
			return true
		}
	}
	return false
}

// Two devices share an every-1s routine through `routinely hub`. One is SIGKILLed (and started
// again), the other SIGSTOPped for 10 s (a sleep), then the hub is stopped for 5 s and started
// again on the same store. Throughout: no slot runs twice; no slot is missing while a device is
// up and the hub too, except within the liveness TTL (+1 s) of a device's failure; and both
// devices' histories together explain every slot, the missing ones included.
func TestHubTwoDevicesOneSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("45 s chaos run")
	}
	h, store, out, routines := sharedTickHub(t, "1s", "5s")
	listen := strings.TrimPrefix(h.url, "nats://")
	homeA := deviceHome(t, h, "laptop", routines)
	homeB := deviceHome(t, h, "desktop", routines)
	a := start(t, homeA, "daemon")
	b := start(t, homeB, "daemon")
	waitOwner(t, homeA, a.pid())
	waitOwner(t, homeB, b.pid())
	tl := &timeline{start: time.Now()}
	// Both see each other, with no drift.
	waitStatus(t, homeA, "both devices up, no drift", func(s statusOut) bool {
		return s.Hub != nil && s.Hub.Connected && len(s.Hub.Devices) == 2 && s.Hub.Devices[0].Alive && s.Hub.Devices[1].Alive && len(s.Hub.Drift) == 0
	})
	time.Sleep(5 * time.Second)

	// SIGKILL the laptop: the desktop covers its slots within the TTL (+1 s).
	killed := time.Now()
	a.signal(syscall.SIGKILL)
	a.wait(cmdTimeout)
	tl.gap(killed.Add(-time.Second), killed.Add(livenessTTL+2*time.Second), "laptop killed")
	time.Sleep(7 * time.Second)
	a = start(t, homeA, "daemon")
	waitOwner(t, homeA, a.pid())
	time.Sleep(3 * time.Second)

	// SIGSTOP the desktop for 10 s: the laptop covers; the desktop, continued, runs nothing
	// the laptop ran.
	stopped := time.Now()
	b.signal(syscall.SIGSTOP)
	time.Sleep(10 * time.Second)
	b.signal(syscall.SIGCONT)
	tl.gap(stopped.Add(-time.Second), stopped.Add(livenessTTL+2*time.Second), "desktop stopped")
	time.Sleep(4 * time.Second)

	// Stop the hub for 5 s: nothing shared runs (both say hub-unreachable, exit 4); once it is
	// back on the same store, the devices carry on and no slot runs twice.
	hubDown := time.Now()
	h.signal(syscall.SIGTERM)
	if code := h.wait(cmdTimeout); code != 0 {
		t.Fatalf("hub: exit %d on SIGTERM", code)
	}
	s := waitStatus(t, homeB, "hub-unreachable", func(s statusOut) bool { return s.ExitCode == 4 && hasDiagnosis(s, "hub-unreachable") })
	if s.Hub == nil || s.Hub.Connected {
		t.Fatalf("status while the hub is down: hub %+v", s.Hub)
	}
	time.Sleep(time.Until(hubDown.Add(5 * time.Second)))
	h = startHubProc(t, store, listen)
	hubUp := time.Now()
	tl.gap(hubDown.Add(-time.Second), hubUp.Add(4*time.Second), "hub down")
	waitStatus(t, homeB, "healthy again", func(s statusOut) bool { return s.ExitCode == 0 && s.Hub != nil && s.Hub.Connected })
	time.Sleep(6 * time.Second)

	end := time.Now()
	for _, p := range []*proc{a, b} {
		p.signal(syscall.SIGTERM)
		if code := p.wait(cmdTimeout); code != 0 {
			t.Fatalf("daemon pid %d: exit %d on SIGTERM", p.pid(), code)
		}
	}
	// The restarted hub served the devices to the end and stops cleanly.
	h.signal(syscall.SIGTERM)
	if code := h.wait(cmdTimeout); code != 0 {
		t.Fatalf("restarted hub: exit %d on SIGTERM", code)
	}

	// What ran: each slot at most once.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[int64]string{} // slot (Unix s) → device
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

	// What the histories say: every slot a device ran is its success (or its run's record),
	// and every slot that did not run is explained.
	explained := map[int64][]string{}
	for _, c := range []struct{ home, device string }{{homeA, "laptop"}, {homeB, "desktop"}} {
		for _, r := range hubHistory(t, c.home) {
			slot := r.Slot.Unix()
			explained[slot] = append(explained[slot], fmt.Sprintf("%s: %s (%s) device %s", c.device, r.Outcome, r.Reason, r.Device))
			if r.Outcome == "success" && ran[slot] != c.device {
				t.Errorf("slot %s: %s's history says success, but the output says it ran on %q", r.Slot.Format(time.RFC3339), c.device, ran[slot])
			}
		}
	}
	if len(ran) < 20 {
		t.Fatalf("only %d slots ran in %s", len(ran), end.Sub(tl.start))
	}
	missing, unexplained := 0, 0
	for s := tl.start.Truncate(time.Second).Add(time.Second).UTC(); s.Before(end.Add(-2 * time.Second)); s = s.Add(time.Second) {
		if _, ok := ran[s.Unix()]; ok {
			if len(explained[s.Unix()]) == 0 {
				t.Errorf("slot %s ran but no history has it", s.Format(time.RFC3339))
			}
			continue
		}
		missing++
		if len(explained[s.Unix()]) == 0 {
			unexplained++
			t.Errorf("slot %s did not run and no history explains it", s.Format(time.RFC3339))
			continue
		}
		t.Logf("slot %s did not run: %v", s.Format(time.RFC3339), explained[s.Unix()])
		if !tl.excused(s) {
			t.Errorf("slot %s did not run while a device and the hub were up: %v", s.Format(time.RFC3339), explained[s.Unix()])
		}
	}
	for _, g := range tl.gaps {
		t.Logf("window %s: %s to %s", g.why, g.from.UTC().Format(time.RFC3339Nano), g.to.UTC().Format(time.RFC3339Nano))
	}
	t.Logf("%d slots ran, %d missing (unexplained: %d)", len(ran), missing, unexplained)
}

// With [hub] offline = "local", a device that cannot reach the hub runs the shared routines
// alone, and status says so instead of saying they do not run (hub.json carries the owner's
// setting).
func TestHubOfflineLocalRunsAloneAndSaysSo(t *testing.T) {
	h := startHubProc(t, filepath.Join(t.TempDir(), "hub"), "127.0.0.1:0")
	home := deviceHome(t, h, "laptop", "offline = \"local\"\n\n[[routine]]\nname = \"tick\"\nevery = \"1s\"\nshell = 'true'\n")
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	waitStatus(t, home, "connected to the hub", func(s statusOut) bool { return s.Hub != nil && s.Hub.Connected })

	h.signal(syscall.SIGTERM)
	if code := h.wait(cmdTimeout); code != 0 {
		t.Fatalf("hub: exit %d on SIGTERM", code)
	}
	hubDown := time.Now()
	s := waitStatus(t, home, "hub-unreachable", func(s statusOut) bool { return hasDiagnosis(s, "hub-unreachable") })
	if s.Hub == nil || s.Hub.Connected || !s.Hub.OfflineLocal {
		t.Fatalf("status while the hub is down: hub %+v, want not connected, offline_local", s.Hub)
	}
	for _, dev := range s.Hub.Devices {
		if dev.Name == "laptop" && dev.Alive {
			t.Fatalf("status while the hub is down lists this device as up on it: %+v", s.Hub.Devices)
		}
	}
	for _, dg := range s.Diagnoses {
		if dg.Kind == "hub-unreachable" && (!strings.Contains(dg.Message, "run on this device alone") || strings.Contains(dg.Message, "do not run")) {
			t.Fatalf("hub-unreachable says %q, want that the shared routines run here alone", dg.Message)
		}
	}
	waitRun(t, home, "tick", "a run with the hub down", func(r runOut) bool {
		return r.Slot.After(hubDown.Add(time.Second)) && r.Outcome == "success"
	})
	d.signal(syscall.SIGTERM)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon: exit %d on SIGTERM", code)
	}
}

// A [hub] that cannot be used stops the daemon (exit 78, saying what is wrong) instead of
// running the shared routines alone, which could run them twice; so does a missing token file.
func TestHubUnusableRefusesToRunAlone(t *testing.T) {
	for name, hubTable := range map[string]string{
		"invalid":       "[hub]\nurl = \"http://hub.local:4222\"\ntoken = \"x\"\n",
		"missing token": "[hub]\nurl = \"nats://127.0.0.1:1\"\ntoken_file = \"no-such.token\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			home := newHome(t, hubTable+hourly)
			_, stderr, code := run(t, home, "daemon")
			if code != 78 || !strings.Contains(stderr, "hub") {
				t.Fatalf("daemon with an unusable [hub]: exit %d, stderr:\n%s\nwant 78 naming the hub", code, stderr)
			}
		})
	}
}

// `routinely hub` hands over to the routinely-hub program beside it, which keeps the pid (so a
// service manager's SIGTERM reaches the server), and stops on it with exit 0. Without that
// program it says where it looked and what to do, and exits 1.
func TestHubHandsOverToItsProgram(t *testing.T) {
	store := filepath.Join(t.TempDir(), "hub")
	h := startHubProc(t, store, "127.0.0.1:0")
	if runtime.GOOS == "linux" { // elsewhere no /proc tells what a pid runs
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", h.pid()))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(exe) != "routinely-hub" {
			t.Fatalf("pid %d runs %s, want routinely-hub (the hub keeps the pid of `routinely hub`)", h.pid(), exe)
		}
	}
	h.signal(syscall.SIGTERM)
	if code := h.wait(ownDeadline); code != 0 {
		t.Fatalf("hub exit %d after SIGTERM, want 0; stderr:\n%s", code, h.stderr.String())
	}
	if !strings.Contains(h.stderr.String(), "Hub stopped.") {
		t.Fatalf("hub did not say it stopped:\n%s", h.stderr.String())
	}

	alone := filepath.Join(t.TempDir(), "routinely")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o700); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runBin(t, alone, newHome(t, ""), "hub", "--store", filepath.Join(t.TempDir(), "hub"))
	if code != 1 || !strings.Contains(stderr, "routinely-hub") || !strings.Contains(stderr, "nats-server") {
		t.Fatalf("hub without routinely-hub: exit %d, stderr %q; want 1 naming routinely-hub and the stock nats-server", code, stderr)
	}
}

// Two devices called the same (two machines named after their host, debian): the second daemon
// is refused while the first is up on the hub (exit 78, naming the name and the fix), so the two
// never share a liveness key and mark each other's runs interrupted. Each has its own id in its
// state directory (0600); renamed, the second joins and both see two devices.
func TestHubSecondDeviceWithTheSameNameIsRefused(t *testing.T) {
	h := startHubProc(t, filepath.Join(t.TempDir(), "hub"), "127.0.0.1:0")
	homeA := deviceHome(t, h, "debian", hourly)
	homeB := deviceHome(t, h, "debian", hourly)
	a := start(t, homeA, "daemon")
	waitOwner(t, homeA, a.pid())
	waitStatus(t, homeA, "connected to the hub", func(s statusOut) bool { return s.Hub != nil && s.Hub.Connected })

	b := start(t, homeB, "daemon")
	code := b.wait(ownDeadline)
	stderr := b.stderr.String()
	if code != 78 || !strings.Contains(stderr, `"debian"`) || !strings.Contains(stderr, "another device") || !strings.Contains(stderr, "device = ") {
		t.Fatalf("second daemon called debian: exit %d, stderr:\n%s\nwant 78 naming the clash and how to rename", code, stderr)
	}

	ids := map[string]bool{}
	for _, home := range []string{homeA, homeB} {
		path := filepath.Join(home, "device-id")
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v; want a 0600 file", path, fi, err)
		}
		data, _ := os.ReadFile(path)
		ids[strings.TrimSpace(string(data))] = true
	}
	if len(ids) != 2 {
		t.Fatalf("the two devices have ids %v, want two different ones", ids)
	}

	cfg, err := os.ReadFile(filepath.Join(homeB, "routines.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeConfig(t, homeB, strings.Replace(string(cfg), `device = "debian"`, `device = "debian-2"`, 1))
	b = start(t, homeB, "daemon")
	waitOwner(t, homeB, b.pid())
	waitStatus(t, homeB, "both devices up", func(s statusOut) bool {
		return s.Hub != nil && s.Hub.Connected && len(s.Hub.Devices) == 2 && s.Hub.Devices[0].Alive && s.Hub.Devices[1].Alive
	})
	for _, p := range []*proc{a, b} {
		p.stopWith(syscall.SIGTERM)
	}
}

// A wiped hub store (the hub stopped, its JetStream files deleted, started again on the same
// token) loses the shared anchor of an `every` routine. The devices give the hub their grid back
// from their journals, so a device that arms the routine again afterwards (here the desktop,
// restarted half-way between two slots of the grid, where a new anchor would start another grid)
// keeps the one grid: every slot that runs is on it, none runs twice.
func TestHubWipedStoreKeepsOneGrid(t *testing.T) {
	const period = 5 * time.Second
	h, store, out, routines := sharedTickHub(t, "5s", "4s")
	listen := strings.TrimPrefix(h.url, "nats://")
	homeA := deviceHome(t, h, "laptop", routines)
	homeB := deviceHome(t, h, "desktop", routines)
	a := start(t, homeA, "daemon")
	waitOwner(t, homeA, a.pid())
	b := start(t, homeB, "daemon")
	waitOwner(t, homeB, b.pid())
	waitBothDevicesUp(t, homeA)
	ran := func() map[int64][]string { return slotsRan(t, out) }
	phase := gridPhase(t, out, period)

	h.signal(syscall.SIGTERM)
	if code := h.wait(cmdTimeout); code != 0 {
		t.Fatalf("hub: exit %d on SIGTERM", code)
	}
	if err := os.RemoveAll(filepath.Join(store, "jetstream")); err != nil {
		t.Fatal(err)
	}
	// Half-way between two slots of the grid: an anchor taken now is off it.
	now := time.Now()
	off := now.Truncate(period).Add(time.Duration(phase)*time.Second + period/2)
	for off.Before(now) {
		off = off.Add(period)
	}
	time.Sleep(time.Until(off))
	h = startHubProc(t, store, listen)
	b.stopWith(syscall.SIGTERM)
	b = start(t, homeB, "daemon")
	waitOwner(t, homeB, b.pid())
	rearmed := time.Now()
	time.Sleep(4 * period)

	for _, p := range []*proc{a, b} {
		p.stopWith(syscall.SIGTERM)
	}
	h.signal(syscall.SIGTERM)
	h.wait(cmdTimeout)
	after := 0
	for slot, devices := range ran() {
		at := time.Unix(slot, 0).UTC().Format(time.RFC3339)
		if len(devices) > 1 {
			t.Errorf("slot %s ran twice: on %v", at, devices)
		}
		if slot%int64(period/time.Second) != phase {
			t.Errorf("slot %s (on %v) is off the grid the devices shared (second %d of every 5): a second grid after the wipe", at, devices, phase)
		}
		if time.Unix(slot, 0).After(rearmed) {
			after++
		}
	}
	if after < 3 {
		t.Fatalf("only %d slots ran after the desktop armed again", after)
	}
}

// A wiped hub store forgets who claimed the slots before the wipe. A device that then claims
// one of them on the empty store wins it, so it must not run it: another device may have run it
// a moment before. Here the desktop's owner sleeps (SIGSTOP) through a slot the laptop runs; the
// hub's store is wiped; the desktop's owner is killed and its standby, owning, catches up that
// slot: it records it missed, saying why, and the slot ran once, on the laptop. The next slot
// runs once as usual.
func TestHubWipedStoreDoesNotRunASlotAgain(t *testing.T) {
	const period = 6 * time.Second
	h, store, out, routines := sharedTickHub(t, "6s", "4s")
	listen := strings.TrimPrefix(h.url, "nats://")
	homeA := deviceHome(t, h, "laptop", routines)
	homeB := deviceHome(t, h, "desktop", routines)
	a := start(t, homeA, "daemon")
	waitOwner(t, homeA, a.pid())
	b := start(t, homeB, "daemon")
	waitOwner(t, homeB, b.pid())
	standby := start(t, homeB, "daemon", "--wait")
	waitBothDevicesUp(t, homeA)
	ran := func() map[int64][]string { return slotsRan(t, out) }
	phase := gridPhase(t, out, period)
	// The slot S: at least 2 s ahead, on the grid.
	s := time.Now().Add(2 * time.Second).Truncate(period).Add(time.Duration(phase) * time.Second)
	for s.Before(time.Now().Add(2 * time.Second)) {
		s = s.Add(period)
	}
	time.Sleep(time.Until(s.Add(-time.Second)))
	b.signal(syscall.SIGSTOP) // asleep through S: no claim, no row for it
	for deadline := s.Add(3 * time.Second); len(ran()[s.Unix()]) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("slot %s did not run on the laptop", s.Format(time.TimeOnly))
		}
	}
	h.signal(syscall.SIGTERM)
	if code := h.wait(cmdTimeout); code != 0 {
		t.Fatalf("hub: exit %d on SIGTERM", code)
	}
	if err := os.RemoveAll(filepath.Join(store, "jetstream")); err != nil {
		t.Fatal(err)
	}
	h = startHubProc(t, store, listen)
	b.signal(syscall.SIGKILL)
	b.wait(cmdTimeout)
	waitOwner(t, homeB, standby.pid())
	if time.Now().After(s.Add(period)) {
		t.Fatalf("the standby owned only at %s, after the slot following %s: the test did not catch that slot up", time.Now().Format(time.TimeOnly), s.Format(time.TimeOnly))
	}
	var row *hubRun
	for deadline := time.Now().Add(cmdTimeout); row == nil; time.Sleep(100 * time.Millisecond) {
		for _, r := range hubHistory(t, homeB) {
			if r.Slot.Equal(s) && r.Trigger == "catch-up" {
				row = &r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the desktop's new owner recorded nothing for slot %s: %+v", s.Format(time.TimeOnly), hubHistory(t, homeB))
		}
	}
	if row.Outcome != "missed" || !strings.Contains(row.Reason, "the hub's store began") {
		t.Errorf("the desktop's catch-up of %s: %s (%s), want missed because the hub's store began after it", s.Format(time.TimeOnly), row.Outcome, row.Reason)
	}
	next := s.Add(period)
	time.Sleep(time.Until(next.Add(2 * time.Second)))
	for _, p := range []*proc{a, standby} {
		p.stopWith(syscall.SIGTERM)
	}
	h.signal(syscall.SIGTERM)
	h.wait(cmdTimeout)
	got := ran()
	if d := got[s.Unix()]; len(d) != 1 {
		t.Errorf("slot %s ran on %v, want once, on the laptop", s.Format(time.TimeOnly), d)
	}
	if d := got[next.Unix()]; len(d) != 1 {
		t.Errorf("slot %s after the wipe ran on %v, want once", next.Format(time.TimeOnly), d)
	}
}

// slotsRan reads out, where a shared routine's shell appends "$ROUTINELY_SLOT $ROUTINELY_DEVICE"
// per run, and returns the devices that ran each slot (unix seconds).
func slotsRan(t *testing.T, out string) map[int64][]string {
	t.Helper()
	data, _ := os.ReadFile(out)
	slots := map[int64][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		slot, err := time.Parse(time.RFC3339, f[0])
		if err != nil {
			t.Fatal(err)
		}
		slots[slot.Unix()] = append(slots[slot.Unix()], f[1])
	}
	return slots
}

// waitBothDevicesUp waits until the owner of home sees itself and one other device up on the hub.
func waitBothDevicesUp(t *testing.T, home string) {
	t.Helper()
	waitStatus(t, home, "both devices up", func(s statusOut) bool {
		return s.Hub != nil && s.Hub.Connected && len(s.Hub.Devices) == 2 && s.Hub.Devices[0].Alive && s.Hub.Devices[1].Alive
	})
}

// sharedTickHub starts a hub in a fresh directory and returns it, its store, the slots file and
// a routines.toml whose shared routine `tick` (every and timeout as written there) appends
// "$ROUTINELY_SLOT $ROUTINELY_DEVICE" to that file per run (slotsRan reads it).
func sharedTickHub(t *testing.T, every, timeout string) (h *hubProc, store, out, routines string) {
	t.Helper()
	dir := t.TempDir()
	out = filepath.Join(dir, "slots.txt")
	store = filepath.Join(dir, "hub-store")
	h = startHubProc(t, store, "127.0.0.1:0")
	routines = fmt.Sprintf(`
[[routine]]
name = "tick"
every = %q
shell = 'echo "$ROUTINELY_SLOT $ROUTINELY_DEVICE" >> %q'
timeout = %q
`, every, out, timeout)
	return h, store, out, routines
}

// gridPhase waits (3 periods at most) for a slot of the routine writing out to run and returns
// its grid's phase: its unix seconds modulo period.
func gridPhase(t *testing.T, out string, period time.Duration) int64 {
	t.Helper()
	for deadline := time.Now().Add(3 * period); ; time.Sleep(100 * time.Millisecond) {
		for slot := range slotsRan(t, out) {
			return slot % int64(period/time.Second)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot ran within %s", 3*period)
		}
	}
}
