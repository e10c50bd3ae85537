//go:build linux || windows

package ownership

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Three real processes race for a free guard, 200 rounds; the holder is SIGKILLed each round.
func TestThreeContendersRace200Rounds(t *testing.T) {
	dir := testDir(t)
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	contenders := make([]*proc, 3)
	for i := range contenders {
		contenders[i] = startHelper(t, "contender", dir)
	}
	var lastEpoch uint64
	for round := 0; round < rounds; round++ {
		for _, c := range contenders {
			c.send("acquire")
		}
		winner := -1
		var winnerPID int
		results := make([][]string, 3)
		for i, c := range contenders {
			results[i] = c.expect("owned|refused|error", long)
			if results[i][0] == "owned" {
				if winner >= 0 {
					t.Fatalf("round %d: two owners: %q and %q", round, results[winner], results[i])
				}
				var epoch uint64
				epoch, winnerPID, _, _ = parseOwned(t, results[i])
				if epoch <= lastEpoch {
					t.Fatalf("round %d: epoch %d not above previous %d", round, epoch, lastEpoch)
				}
				lastEpoch, winner = epoch, i
			} else if results[i][0] == "error" {
				t.Fatalf("round %d: contender error: %q", round, results[i])
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody owns a free guard: %q", round, results)
		}
		for i, r := range results {
			if i == winner {
				continue
			}
			// Losers name the holder or say "unknown" (0): never a stale or wrong process.
			holder, _ := strconv.Atoi(r[1])
			locker, _ := strconv.Atoi(r[2])
			if (holder != 0 && holder != winnerPID) || (locker != 0 && locker != winnerPID) {
				t.Fatalf("round %d: loser named holder %d / lock holder %d, winner is %d", round, holder, locker, winnerPID)
			}
		}
		contenders[winner].kill()
		contenders[winner] = startHelper(t, "contender", dir)
	}
	if lastEpoch < uint64(rounds) {
		t.Fatalf("final epoch %d after %d rounds", lastEpoch, rounds)
	}
}

// Bad owner metadata never decides anything: with the guard held the challenger is refused, with
// it free the challenger acquires, whatever owner.json says.
func TestBadMetadata(t *testing.T) {
	host := selfHost()
	me, _ := identify(os.Getpid())
	deadPID := exitedPID(t)
	unrelated := startHelper(t, "sleep", "")
	uid, _ := identify(unrelated.pid())

	valid := func(mut func(*Record)) func(string) {
		return func(dir string) {
			r := Record{Token: "t-old", Epoch: 41, PID: me.PID, PIDStartMS: me.StartMS, PIDStartTicks: me.StartTicks,
				Host: host, UID: os.Getuid(), Role: RoleDaemon, AcquiredAt: time.Now(), HeartbeatAt: time.Now(),
				HeartbeatIntervalMS: 100, State: StateOwning}
			mut(&r)
			if err := writeJSONAtomic(dir, recordName, r, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw := func(s string) func(string) {
		return func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, recordName), []byte(s), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name  string
		write func(dir string)
	}{
		{"missing", func(string) {}},
		{"empty", raw("")},
		{"torn", raw(`{"token":"t-old","epoch":41,"pid":`)},
		{"garbage", raw("\x00\x01not json")},
		{"another-host", valid(func(r *Record) { r.Host = "elsewhere.example" })},
		{"dead-pid", valid(func(r *Record) { r.PID = deadPID; r.PIDStartTicks = 1 })},
		{"reused-pid", valid(func(r *Record) {
			r.PID, r.PIDStartMS, r.PIDStartTicks = uid.PID, uid.StartMS-3_600_000, uid.StartTicks-100_000
		})},
		{"day-old-heartbeat", valid(func(r *Record) { r.HeartbeatAt = time.Now().Add(-24 * time.Hour) })},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/held", func(t *testing.T) {
			dir := testDir(t)
			holder := startHelper(t, "bareflock", dir)
			holder.expect("owned", long)
			tc.write(dir)
			_, err := Acquire(context.Background(), Options{Dir: dir})
			var oe *OwnedError
			if !errors.As(err, &oe) || !errors.Is(err, ErrOwned) {
				t.Fatalf("Acquire with the guard held: %v, want *OwnedError", err)
			}
			// Where the OS does not name the lock's holder (Windows), a record naming a live
			// process of this host and user is believed even when its heartbeat is old: that is
			// also what a suspended owner looks like (docs/design.md#32-acquire).
			believable := !lockHolderKnown && tc.name == "day-old-heartbeat"
			if oe.Holder != nil && !believable {
				t.Fatalf("record naming pid %d believed as holder; the real holder is %d", oe.Holder.PID, holder.pid())
			}
			if want := holder.pid(); lockHolderKnown && oe.Status.HolderPID != want || !lockHolderKnown && oe.Status.HolderPID != 0 {
				t.Fatalf("lock holder %d, want %d (0 where the OS does not name it)", oe.Status.HolderPID, want)
			}
			if !oe.Status.Held || len(oe.Status.Diagnoses) == 0 && tc.name != "missing" {
				t.Fatalf("status %+v: want held with a diagnosis", oe.Status)
			}
		})
		t.Run(tc.name+"/free", func(t *testing.T) {
			dir := testDir(t)
			tc.write(dir)
			prev, _ := readRecord(dir)
			h := acquireT(t, Options{Dir: dir})
			if prev != nil && h.Epoch() != prev.Epoch+1 {
				t.Fatalf("epoch %d after a record with epoch %d", h.Epoch(), prev.Epoch)
			}
			if h.Epoch() < 1 {
				t.Fatalf("epoch %d", h.Epoch())
			}
			eventually(t, long, "record rewritten by the new owner", func() bool {
				r, err := readRecord(dir)
				return err == nil && r != nil && r.Token == h.Token() && r.PID == os.Getpid()
			})
		})
	}
}

// The owner's children never hold the guard: SIGKILL the owner and a standby owns within 1 s.
func TestCrashWithChildrenStandbyOwns(t *testing.T) {
	dir := testDir(t)
	owner := startHelper(t, "contender", dir)
	owner.send("acquire")
	epoch1, _, _, _ := parseOwned(t, owner.expect("owned", long))
	owner.send("spawn")
	kids := owner.expect("children", long)[1:]
	for _, k := range kids {
		pid, _ := strconv.Atoi(k)
		t.Cleanup(func() { _ = kill(pid) })
	}
	standby := startHelper(t, "contender", dir)
	standby.send("wait")
	standby.expect("waiting", long)
	time.Sleep(100 * time.Millisecond) // let it reach its poll loop

	killedAt := time.Now()
	owner.kill()
	epoch2, pid2, ownedAt, _ := parseOwned(t, standby.expect("owned", long))
	if pid2 != standby.pid() || epoch2 <= epoch1 {
		t.Fatalf("standby owned as pid %d epoch %d (owner epoch %d)", pid2, epoch2, epoch1)
	}
	if d := ownedAt.Sub(killedAt); d > time.Second {
		t.Fatalf("standby owned %s after the SIGKILL, want within 1 s", d)
	}
	for _, k := range kids {
		pid, _ := strconv.Atoi(k)
		if !pidExists(pid) {
			t.Fatalf("child %d is not running; the checks below would prove nothing", pid)
		}
	}
	st, err := Inspect(dir)
	if err != nil || !heldBy(st, standby.pid()) {
		t.Fatalf("Inspect after crash: %+v %v, want held by %d", st, err, standby.pid())
	}
	assertNoGuardHandle(t, dir, standby, kids)
}

// A second ownership attempt inside one process is refused with its own error.
func TestSecondAcquireInProcess(t *testing.T) {
	dir := testDir(t)
	acquireT(t, Options{Dir: dir})
	for _, try := range []func() error{
		func() error { _, err := Acquire(context.Background(), Options{Dir: dir}); return err },
		func() error { _, err := Wait(context.Background(), Options{Dir: dir}); return err },
	} {
		if err := try(); !errors.Is(err, ErrHeldInProcess) || errors.Is(err, ErrOwned) {
			t.Fatalf("second attempt in one process: %v, want ErrHeldInProcess", err)
		}
	}
}

// The epoch is durable in its own file: deleting owner.json never lets it go back, and the
// journal's floor is respected.
func TestEpochNeverReused(t *testing.T) {
	dir := testDir(t)
	var last uint64
	for i := 0; i < 3; i++ {
		h, err := Acquire(context.Background(), Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if h.Epoch() <= last {
			t.Fatalf("epoch %d after %d", h.Epoch(), last)
		}
		last = h.Epoch()
		if stored, _ := readEpochFile(dir); stored != last {
			t.Fatalf("epoch file %d, handle %d", stored, last)
		}
		if err := h.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, recordName)); err != nil {
			t.Fatal(err)
		}
	}
	h := acquireT(t, Options{Dir: dir, EpochFloor: func() (uint64, error) { return 100, nil }})
	if h.Epoch() != 101 {
		t.Fatalf("epoch %d with journal floor 100, want 101", h.Epoch())
	}
}

// Release never lets go while a run is in flight.
func TestReleaseWaitsForInFlight(t *testing.T) {
	dir := testDir(t)
	h, err := Acquire(context.Background(), Options{Dir: dir, HeartbeatInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done, err := h.BeginRun("backup", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := h.Release(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Release with a run in flight: %v", err)
	}
	st, _ := Inspect(dir)
	if !heldBy(st, os.Getpid()) {
		t.Fatalf("guard let go with a run in flight: %+v", st)
	}
	if _, err := h.BeginRun("other", time.Now()); !errors.Is(err, ErrNotAdmitting) {
		t.Fatalf("BeginRun while releasing: %v", err)
	}
	done()
	receive(t, h.Lost(), "the release to complete after the run ended")
	r, _ := readRecord(dir)
	if r == nil || r.State != StateReleased || r.LastJob == nil || r.LastJob.Finished == nil {
		t.Fatalf("record after release: %+v", r)
	}
	if st, _ := Inspect(dir); st.Held {
		t.Fatal("guard still held after release")
	}
}

// A failed record write (here: owner.json replaced by a directory) never ends ownership; it is
// reported, and the next heartbeat after the obstacle is gone writes the record again.
func TestFailedWriteKeepsOwnership(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, HeartbeatInterval: 50 * time.Millisecond})
	eventually(t, long, "record written", func() bool { r, _ := readRecord(dir); return r != nil })
	blocker := filepath.Join(dir, recordName)
	// The heartbeat may write owner.json again between the remove and the mkdir: repeat.
	eventually(t, long, "owner.json replaced by a directory", func() bool {
		_ = os.Remove(blocker)
		return os.MkdirAll(filepath.Join(blocker, "x"), 0o700) == nil
	})
	select {
	case ev := <-h.Events():
		if ev.Kind != EventWriteFailed || ev.Err == nil || !strings.Contains(ev.Err.Error(), recordName) {
			t.Fatalf("event %+v, want write-failed naming owner.json", ev)
		}
	case <-time.After(long):
		t.Fatal("no write-failed event")
	}
	if !h.Admitting() {
		t.Fatal("a failed write stopped admission")
	}
	// The record is unreadable now, so where the OS does not name the holder only Held is known.
	if st, _ := Inspect(dir); !st.Held || lockHolderKnown && st.HolderPID != os.Getpid() {
		t.Fatalf("guard lost after a failed write: %+v", st)
	}
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	eventually(t, long, "record written again", func() bool {
		r, _ := readRecord(dir)
		return r != nil && r.Token == h.Token()
	})
}

// Nobody reading Events never blocks the owner: events beyond the buffer are dropped.
func TestEventsNeverBlock(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir})
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.mu.Lock()
		defer h.mu.Unlock()
		for range 3 * eventBuffer {
			h.emit(Event{Kind: EventWriteFailed})
		}
	}()
	receive(t, done, "emit to return without a reader")
	if n := len(h.Events()); n != eventBuffer {
		t.Fatalf("%d buffered events, want %d", n, eventBuffer)
	}
}
