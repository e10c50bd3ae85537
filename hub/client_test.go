package hub_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/hub/hubserver"
	"github.com/routinely/routinely/scheduler"
)

// quiet keeps the server's and clients' logs out of the test output unless -v.
func quiet(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(discard{}, nil))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// newStore is a store directory for a hub that does not exist yet (the hub creates it 0700).
func newStore(t *testing.T) string { return filepath.Join(t.TempDir(), "hub") }

// startHub starts a real hub on a free loopback port with its store in dir.
func startHub(t *testing.T, dir, listen string) *hubserver.Server {
	t.Helper()
	s, err := hubserver.Start(context.Background(), hubserver.Options{Listen: listen, Store: dir, Logger: quiet(t)})
	if err != nil {
		t.Fatalf("start hub: %v", err)
	}
	return s
}

// startHubB and joinB are startHub and join for benchmarks.
func startHubB(b *testing.B) *hubserver.Server {
	s, err := hubserver.Start(context.Background(), hubserver.Options{Listen: "127.0.0.1:0",
		Store: filepath.Join(b.TempDir(), "hub"), Logger: slog.New(slog.NewTextHandler(discard{}, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func joinB(b *testing.B, url, token string) *hub.Client {
	c := hub.New(hub.Options{URL: url, Token: token, ID: "id-bench", Device: "bench", LivenessTTL: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(discard{}, nil))})
	if err := c.Start("j-bench", 1, nil, nil); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := c.Claim(context.Background(), "warm-up", slot0, time.Hour); err == nil {
			return c
		}
	}
	b.Fatal("the hub did not answer")
	return nil
}

// device is one device's client on the hub, with the runs it was told to settle.
type device struct {
	*hub.Client
	mu      sync.Mutex
	settled []string
	moved   []string // routine@anchor of each move the client asked for
}

func (d *device) moves() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.moved...)
}

func (d *device) settledRuns() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.settled...)
}

// join starts a client for name, with its own journal id, on s; its device id is "id-" + journal
// (a device keeps its journal across restarts and takeovers).
func join(t *testing.T, s *hubserver.Server, name, journal string, epoch uint64, stateDir string) *device {
	t.Helper()
	d := &device{}
	d.Client = hub.New(hub.Options{URL: s.URL, Token: s.Token, ID: "id-" + journal, Device: name, LivenessTTL: 2 * time.Second,
		Version: "test", StateDir: stateDir, PID: os.Getpid(), Logger: quiet(t)})
	err := d.Start(journal, epoch, func(routine string, slot time.Time, device, reason string) {
		d.mu.Lock()
		d.settled = append(d.settled, routine+"@"+slot.UTC().Format(time.RFC3339)+" on "+device)
		d.mu.Unlock()
	}, func(routine string, a scheduler.Anchor) {
		d.mu.Lock()
		d.moved = append(d.moved, routine+"@"+a.At.UTC().Format(time.RFC3339))
		d.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("join %s: %v", name, err)
	}
	t.Cleanup(d.Stop)
	return d
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// claim is Claim with a test context; it fails the test on an error.
func claim(t *testing.T, d *device, routine string, slot time.Time) scheduler.HubClaim {
	t.Helper()
	c, err := d.Claim(context.Background(), routine, slot, time.Hour)
	if err != nil {
		t.Fatalf("%s claims %s %s: %v", d.Device(), routine, slot, err)
	}
	return c
}

var slot0 = time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)

// Each slot is won by exactly one of the devices claiming it at once; the others learn who won.
func TestClaimOnceAcrossDevices(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	devs := []*device{
		join(t, s, "laptop", "j-laptop", 1, ""),
		join(t, s, "desktop", "j-desktop", 1, ""),
		join(t, s, "server", "j-server", 1, ""),
	}
	for i := range 20 {
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
					t.Fatalf("slot %d: won by %s and %s", i, devs[won].Device(), devs[k].Device())
				}
				won = k
			}
		}
		if won < 0 {
			t.Fatalf("slot %d: nobody won: %+v", i, res)
		}
		for k, c := range res {
			if k != won && (c.Verdict != scheduler.HubElsewhere || c.Device != devs[won].Device()) {
				t.Fatalf("slot %d: %s got %+v, want elsewhere on %s", i, devs[k].Device(), c, devs[won].Device())
			}
		}
		devs[won].Release(res[won], "success")
		// A device that claims the slot again later (a wake, a catch-up pass) never wins it.
		for k, d := range devs {
			if k != won {
				if c := claim(t, d, "briefing", slot); c.Verdict != scheduler.HubElsewhere {
					t.Fatalf("slot %d claimed again by %s: %+v", i, d.Device(), c)
				}
			}
		}
	}
}

// While a run goes on one device, the next slot on another device meets the overlap policy
// (HubBusy naming the device and its slot); once the run is released, the slot can be won.
func TestClaimBusyWhileRunningElsewhere(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	a := join(t, s, "laptop", "j-laptop", 1, "")
	b := join(t, s, "desktop", "j-desktop", 1, "")
	first := claim(t, a, "backup", slot0)
	if first.Verdict != scheduler.HubWon {
		t.Fatalf("first claim: %+v", first)
	}
	next := slot0.Add(time.Minute)
	got := claim(t, b, "backup", next)
	if got.Verdict != scheduler.HubBusy || got.Device != "laptop" || !got.Running.Equal(slot0) {
		t.Fatalf("claim while laptop runs: %+v, want busy on laptop running %s", got, slot0)
	}
	a.Release(first, "success")
	if got := claim(t, b, "backup", next); got.Verdict != scheduler.HubWon {
		t.Fatalf("claim after the release: %+v", got)
	}
}

// A device killed mid-run: once its liveness key expires, exactly one other device settles
// its run (records it interrupted) and the routine's next slot can run elsewhere.
func TestDeadDeviceRunIsSettledOnce(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	a := join(t, s, "laptop", "j-laptop", 1, "")
	b := join(t, s, "desktop", "j-desktop", 1, "")
	c := join(t, s, "server", "j-server", 1, "")
	if got := claim(t, a, "backup", slot0); got.Verdict != scheduler.HubWon {
		t.Fatalf("claim: %+v", got)
	}
	next := slot0.Add(time.Minute)
	if got := claim(t, b, "backup", next); got.Verdict != scheduler.HubBusy {
		t.Fatalf("claim while laptop is alive: %+v, want busy", got)
	}
	killed := time.Now()
	a.Crash()
	eventually(t, 10*time.Second, "the laptop's run to be settled", func() bool {
		return len(b.settledRuns())+len(c.settledRuns()) > 0
	})
	took := time.Since(killed)
	time.Sleep(time.Second) // a second settle would come within a loop tick
	all := append(b.settledRuns(), c.settledRuns()...)
	if want := "backup@2026-12-01T08:30:00Z on laptop"; len(all) != 1 || all[0] != want {
		t.Fatalf("settled %q, want exactly [%q]", all, want)
	}
	if took < 2*time.Second-200*time.Millisecond {
		t.Fatalf("settled %s after the kill: before the 2 s liveness TTL ran out", took)
	}
	if got := claim(t, b, "backup", next); got.Verdict != scheduler.HubWon {
		t.Fatalf("claim after the settle: %+v", got)
	}
}

// The hub down: claims fail at once with ErrHubUnreachable (nothing shared runs). A restarted
// hub on the same store still has every claim acknowledged before, so a slot won before the
// restart can never be won by another device after it.
func TestHubDownFailsClosedAndClaimsSurviveARestart(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	a := join(t, s, "laptop", "j-laptop", 1, "")
	b := join(t, s, "desktop", "j-desktop", 1, "")
	won := claim(t, a, "briefing", slot0)
	if won.Verdict != scheduler.HubWon {
		t.Fatalf("claim: %+v", won)
	}
	a.Release(won, "success")
	url := s.URL
	s.Shutdown()
	eventually(t, 5*time.Second, "the desktop to notice the hub is gone", func() bool {
		_, err := b.Claim(context.Background(), "briefing", slot0.Add(time.Minute), time.Hour)
		return errors.Is(err, scheduler.ErrHubUnreachable)
	})
	began := time.Now()
	if _, err := b.Claim(context.Background(), "briefing", slot0.Add(2*time.Minute), time.Hour); !errors.Is(err, scheduler.ErrHubUnreachable) {
		t.Fatalf("claim with the hub down: %v, want ErrHubUnreachable", err)
	}
	if d := time.Since(began); d > 100*time.Millisecond {
		t.Fatalf("a claim with the hub down took %s: it must fail at once", d)
	}
	s = startHub(t, store, url[len("nats://"):])
	defer s.Shutdown()
	eventually(t, 10*time.Second, "the desktop to reconnect", func() bool {
		_, err := b.Claim(context.Background(), "other", slot0, time.Hour)
		return err == nil
	})
	if got := claim(t, b, "briefing", slot0); got.Verdict != scheduler.HubElsewhere || got.Device != "laptop" {
		t.Fatalf("the slot won before the restart, claimed after it: %+v, want elsewhere on laptop", got)
	}
}

// A new owner of the same journal (a restart of the device's owner) recognises the claim its
// predecessor made but never ran: the hub claim is its own, and the local journal decides.
func TestOwnClaimIsRecognisedAfterARestart(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	a := join(t, s, "laptop", "j-laptop", 1, "")
	if got := claim(t, a, "briefing", slot0); got.Verdict != scheduler.HubWon {
		t.Fatalf("claim: %+v", got)
	}
	a.Crash()
	again := join(t, s, "laptop", "j-laptop", 2, "")
	if got := claim(t, again, "briefing", slot0); got.Verdict != scheduler.HubWon {
		t.Fatalf("the restarted owner claims its predecessor's slot: %+v, want won", got)
	}
	other := join(t, s, "desktop", "j-desktop", 1, "")
	if got := claim(t, other, "briefing", slot0); got.Verdict != scheduler.HubElsewhere {
		t.Fatalf("another device claims it: %+v, want elsewhere", got)
	}
}

// every-routines share one anchor: the first device to arm an interval sets it, the others
// use it; a new interval sets a new anchor.
func TestSharedAnchor(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	a := join(t, s, "laptop", "j-laptop", 1, "")
	b := join(t, s, "desktop", "j-desktop", 1, "")
	t1 := time.Date(2026, 12, 1, 8, 0, 17, 400, time.UTC)
	t2 := t1.Add(42 * time.Second)
	got := a.Anchors(context.Background(), map[string]time.Duration{"tick": time.Minute}, nil, t1)
	if want := t1.Truncate(time.Second); !got["tick"].Equal(want) {
		t.Fatalf("first anchor %v, want %v", got["tick"], want)
	}
	if got := b.Anchors(context.Background(), map[string]time.Duration{"tick": time.Minute}, nil, t2); !got["tick"].Equal(t1.Truncate(time.Second)) {
		t.Fatalf("second device's anchor %v, want the first's %v", got["tick"], t1.Truncate(time.Second))
	}
	if got := b.Anchors(context.Background(), map[string]time.Duration{"tick": 2 * time.Minute}, nil, t2); !got["tick"].Equal(t2.Truncate(time.Second)) {
		t.Fatalf("anchor of a new interval %v, want %v", got["tick"], t2.Truncate(time.Second))
	}
}

// A routine defined differently on two devices is reported on both (hub.json's drift), and
// each device lists the other as seen.
func TestDefinitionDriftIsReportedOnBoth(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	dirA, dirB := t.TempDir(), t.TempDir()
	a := join(t, s, "laptop", "j-laptop", 1, dirA)
	b := join(t, s, "desktop", "j-desktop", 1, dirB)
	a.Publish(map[string]string{"briefing": "h1", "backup": "same"}, nil)
	b.Publish(map[string]string{"briefing": "h2", "backup": "same"}, nil)
	for _, c := range []struct {
		dir, other string
	}{{dirA, "desktop"}, {dirB, "laptop"}} {
		eventually(t, 10*time.Second, "drift in "+c.dir, func() bool {
			st, err := hub.ReadState(c.dir)
			if err != nil || len(st.Drift) != 1 {
				return false
			}
			seen := false
			for _, d := range st.Devices {
				seen = seen || d.Name == c.other && d.Alive
			}
			return seen && st.Drift[0].Routine == "briefing" && len(st.Drift[0].Devices) == 1 && st.Drift[0].Devices[0] == c.other
		})
	}
	if _, err := os.Stat(filepath.Join(dirA, hub.StateFile)); err != nil {
		t.Fatal(err)
	}
}

// After a takeover on one device, the old owner's stop does not delete the new owner's
// liveness key: the other devices do not take the new owner's run for a dead device's.
func TestStopAfterTakeoverKeepsTheSuccessorAlive(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	old := join(t, s, "laptop", "j-laptop", 1, "")
	other := join(t, s, "desktop", "j-desktop", 1, "")
	successor := join(t, s, "laptop", "j-laptop", 2, "")
	if got := claim(t, successor, "backup", slot0); got.Verdict != scheduler.HubWon {
		t.Fatalf("successor's claim: %+v", got)
	}
	time.Sleep(time.Second) // the successor has refreshed the liveness key
	old.Stop()
	time.Sleep(1500 * time.Millisecond) // a deletion would reach the desktop's watcher by now
	if got := other.settledRuns(); len(got) != 0 {
		t.Fatalf("the desktop settled %v: it took the laptop's new owner for dead", got)
	}
	if got := claim(t, other, "backup", slot0.Add(time.Minute)); got.Verdict != scheduler.HubBusy {
		t.Fatalf("desktop's claim while the laptop's new owner runs: %+v, want busy", got)
	}
}

// stateLog records hub.json as each OnChange call found it.
type stateLog struct {
	mu   sync.Mutex
	seen []hub.State
}

// all returns what was recorded, oldest first.
func (l *stateLog) all() []hub.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]hub.State(nil), l.seen...)
}

// last returns the newest record, the zero State before the first.
func (l *stateLog) last() hub.State {
	all := l.all()
	if len(all) == 0 {
		return hub.State{}
	}
	return all[len(all)-1]
}

// startTold starts a client for device on s with its own state directory, whose OnChange
// records that directory's hub.json in told (a read error fails the test); it is stopped at the
// test's end.
func startTold(t *testing.T, s *hubserver.Server, device string, ttl time.Duration, told *stateLog) {
	t.Helper()
	dir := t.TempDir()
	c := hub.New(hub.Options{URL: s.URL, Token: s.Token, ID: "id-" + device, Device: device, LivenessTTL: ttl,
		StateDir: dir, PID: os.Getpid(), Logger: quiet(t), OnChange: func() {
			st, err := hub.ReadState(dir)
			if err != nil {
				t.Errorf("hub.json when OnChange was told: %v", err)
			}
			told.mu.Lock()
			told.seen = append(told.seen, st)
			told.mu.Unlock()
		}})
	if err := c.Start("j-"+device, 1, nil, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
}

// OnChange is told when what the device sees of the hub changes (connected, another device
// joined, the hub went away), with hub.json already saying so, and not at the refreshes in
// between, which change only times.
func TestOnChangeTellsOfHubStateChangesOnly(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	var told stateLog
	startTold(t, s, "laptop", 2*time.Second, &told)
	calls, last := told.all, told.last
	eventually(t, 10*time.Second, "OnChange with the hub connected", func() bool { return last().Connected })

	// Nothing changes but times for 3.5 s (a refresh every 0.5 s): no call.
	n := len(calls())
	time.Sleep(3500 * time.Millisecond)
	if got := calls(); len(got) != n {
		t.Fatalf("OnChange told %d more times while only times changed: %+v", len(got)-n, got[n:])
	}

	// Another device joins: told, with that device in hub.json.
	join(t, s, "desktop", "j-desktop", 1, "")
	eventually(t, 10*time.Second, "OnChange with the desktop seen", func() bool {
		for _, d := range last().Devices {
			if d.Name == "desktop" && d.Alive {
				return true
			}
		}
		return false
	})

	// The hub goes away: told, with hub.json saying not connected.
	s.Shutdown()
	eventually(t, 10*time.Second, "OnChange with the hub gone", func() bool {
		st := last()
		return !st.Connected && st.Error != ""
	})
}

// After the hub restarts, the other devices keep their liveness as last seen until the new
// watcher has delivered the keys as they are: OnChange never shows a live device gone for a
// tick after the reconnect.
func TestAReconnectDoesNotShowLiveDevicesGone(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	listen := s.URL[len("nats://"):]
	// The desktop's liveness key outlives the restart by far.
	desktop := hub.New(hub.Options{URL: s.URL, Token: s.Token, ID: "id-desktop", Device: "desktop", LivenessTTL: time.Minute, Logger: quiet(t)})
	if err := desktop.Start("j-desktop", 1, nil, nil); err != nil {
		t.Fatal(err)
	}
	defer desktop.Stop()
	var told stateLog
	startTold(t, s, "laptop", 2*time.Second, &told)
	desktopUp := func(st hub.State) bool {
		for _, d := range st.Devices {
			if d.Name == "desktop" {
				return d.Alive
			}
		}
		return false
	}
	eventually(t, 10*time.Second, "the laptop to see the desktop", func() bool {
		st := told.last()
		return st.Connected && desktopUp(st)
	})

	for round := range 3 {
		s.Shutdown()
		eventually(t, 10*time.Second, "the laptop to notice the hub is gone", func() bool { return !told.last().Connected })
		from := len(told.all())
		s = startHub(t, store, listen)
		eventually(t, 15*time.Second, "the laptop to reconnect", func() bool { return told.last().Connected })
		time.Sleep(time.Second) // the new watcher's keys, and the ticks after them
		after := told.all()[from:]
		for _, st := range after {
			if st.Connected && !desktopUp(st) {
				t.Fatalf("round %d: after the reconnect OnChange showed the desktop gone: %+v", round, after)
			}
		}
	}
	s.Shutdown()
}

// A device whose liveness key expired while the hub was down counts as gone once this device has
// reconnected, although it kept the others' liveness as last seen through the reconnect. (Here
// the restarted hub delivers the key's expiry marker; a key gone with no marker at all is
// settled by apply when the new watcher's first delivery ends without it:
// TestANewWatchSettlesTheDevicesItDidNotDeliver.)
func TestADeviceThatDiedDuringAnOutageIsGoneAfterTheReconnect(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	listen := s.URL[len("nats://"):]
	dir := t.TempDir()
	join(t, s, "laptop", "j-laptop", 1, dir)
	desktop := join(t, s, "desktop", "j-desktop", 1, "")
	desktopUp := func() (up, known bool) {
		st, err := hub.ReadState(dir)
		if err != nil || !st.Connected {
			return false, false
		}
		for _, d := range st.Devices {
			if d.Name == "desktop" {
				return d.Alive, true
			}
		}
		return false, false
	}
	eventually(t, 10*time.Second, "the laptop to see the desktop", func() bool { up, _ := desktopUp(); return up })
	s.Shutdown()
	desktop.Crash() // its key (liveness_ttl 2 s) runs out while the hub is down
	time.Sleep(3 * time.Second)
	s = startHub(t, store, listen)
	defer s.Shutdown()
	eventually(t, 15*time.Second, "the laptop, reconnected, to see the desktop gone", func() bool {
		up, known := desktopUp()
		return known && !up
	})
}

// The first start of a device makes its id (a UUID in the state directory, 0600) and every
// later start reads the same; a file that does not hold one, or is not a regular file, is an
// error that says what to do, never silently replaced by a new id.
func TestDeviceIDIsMadeOnceAndGarbageIsRefused(t *testing.T) {
	dir := t.TempDir()
	id, err := hub.LoadID(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dir, hub.IDFile))
	if err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Fatalf("device id file: %v, %v; want a regular file, 0600", fi, err)
	}
	if again, err := hub.LoadID(dir); err != nil || again != id {
		t.Fatalf("second load: %q, %v; want %q", again, err, id)
	}
	if other, _ := hub.LoadID(t.TempDir()); other == id || other == "" {
		t.Fatalf("another state directory got id %q (this one %q)", other, id)
	}
	for name, create := range map[string]func(path string) error{
		"garbage":  func(p string) error { return os.WriteFile(p, []byte("debian\n"), 0o600) },
		"empty":    func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"too long": func(p string) error { return os.WriteFile(p, make([]byte, 1<<20), 0o600) },
		"symlink":  func(p string) error { return os.Symlink(filepath.Join(dir, hub.IDFile), p) },
	} {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			if err := create(filepath.Join(d, hub.IDFile)); err != nil {
				t.Fatal(err)
			}
			got, err := hub.LoadID(d)
			if !errors.Is(err, hub.ErrDeviceID) || !strings.Contains(err.Error(), "remove it") {
				t.Fatalf("LoadID: %q, %v; want ErrDeviceID saying to remove the file", got, err)
			}
		})
	}
}

// Two devices called the same (two machines named debian): the second is refused while the
// first is live (ErrNameTaken, naming the name and the fix); renamed, it joins.
func TestASecondDeviceWithALiveNameIsRefused(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	join(t, s, "debian", "j-first", 1, "")
	second := hub.New(hub.Options{URL: s.URL, Token: s.Token, ID: "id-second", Device: "debian", LivenessTTL: 2 * time.Second, Logger: quiet(t)})
	err := second.Start("j-second", 1, nil, nil)
	if !errors.Is(err, hub.ErrNameTaken) || !strings.Contains(err.Error(), `"debian"`) || !strings.Contains(err.Error(), "[hub]") {
		t.Fatalf("second device called debian: %v; want ErrNameTaken naming it and [hub]", err)
	}
	second.Stop() // nothing to stop: Start left nothing running
	// The same device again (a restart of its owner, its old key still live) is no clash.
	join(t, s, "debian", "j-first", 2, "")
	join(t, s, "debian-2", "j-second", 1, "")
}

// Two devices with the same name that both got past the start's check (here: both started while
// the hub was down) are still two devices: each is live under its own id, so neither takes the
// other's run for a dead device's (before ids, both refreshed device.debian and each settled the
// other's runs as interrupted), and both report the clash in hub.json.
func TestDevicesWithOneNameAreKeptApartByID(t *testing.T) {
	store := newStore(t)
	s := startHub(t, store, "127.0.0.1:0")
	listen := s.URL[len("nats://"):]
	dirA, dirB := t.TempDir(), t.TempDir()
	a := join(t, s, "debian", "j-a", 1, dirA)
	eventually(t, 10*time.Second, "the first device to be on the hub", func() bool {
		st, err := hub.ReadState(dirA)
		return err == nil && st.Connected
	})
	s.Shutdown()
	b := join(t, s, "debian", "j-b", 1, dirB) // the hub is down: nothing to check against
	s = startHub(t, store, listen)
	defer s.Shutdown()
	for _, dir := range []string{dirA, dirB} {
		eventually(t, 15*time.Second, "both devices to report the clash in "+dir, func() bool {
			st, err := hub.ReadState(dir)
			return err == nil && st.Connected && len(st.NameClash) == 1
		})
	}
	var won scheduler.HubClaim
	eventually(t, 10*time.Second, "the first device's claim", func() bool {
		c, err := a.Claim(context.Background(), "backup", slot0, time.Hour)
		won = c
		return err == nil
	})
	if won.Verdict != scheduler.HubWon {
		t.Fatalf("claim: %+v", won)
	}
	time.Sleep(3 * time.Second) // over the 2 s liveness TTL: a dozen ticks of each device
	if got := append(a.settledRuns(), b.settledRuns()...); len(got) != 0 {
		t.Fatalf("settled %v: a device took the other one of the same name for dead", got)
	}
	if got := claim(t, b, "backup", slot0.Add(time.Minute)); got.Verdict != scheduler.HubBusy || got.Device != "debian" {
		t.Fatalf("the second device's claim while the first runs: %+v, want busy on debian", got)
	}
	a.Release(won, "success")
	if got := claim(t, b, "backup", slot0.Add(time.Minute)); got.Verdict != scheduler.HubWon {
		t.Fatalf("claim after the release: %+v", got)
	}
}
