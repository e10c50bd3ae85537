//go:build linux

package ownership

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// As root, an unprivileged process probing a root owner gets EPERM from kill(pid, 0) and must
// still report it alive (docs/design.md#37-liveness).
func TestUnprivilegedProbeSeesRootOwnerAlive(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to start a uid 65534 helper (CI runs as root)")
	}
	// The test binary must be executable by nobody: copy it into a 0755 directory.
	binDir, err := os.MkdirTemp("", "routinely-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(binDir) })
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "ownership.test")
	copyFile(t, os.Args[0], bin)

	me, err := identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprintf("%s=%d %d %d", envArgs, me.PID, me.StartMS, me.StartTicks)
	p := startHelperAs(t, bin, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}, "probe", binDir, args)
	f := strings.Join(p.expect("probe", long), " ")
	if !strings.Contains(f, "uid=65534") || !strings.Contains(f, "kill0="+syscall.EPERM.Error()) {
		t.Fatalf("probe did not run unprivileged or did not get EPERM: %s", f)
	}
	if !strings.Contains(f, "alive=true") {
		t.Fatalf("EPERM not counted as alive: %s", f)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// Kill-wedged never touches an owner with a fresh heartbeat, and ends a SIGSTOPped one.
func TestKillWedged(t *testing.T) {
	defer func(g time.Duration) { killGrace = g }(killGrace)
	killGrace = 2 * time.Second
	opt := TakeoverOptions{Timeout: 1500 * time.Millisecond, KillWedged: true, WedgeThreshold: time.Second}

	t.Run("healthy-refused", func(t *testing.T) {
		dir := testDir(t)
		owner, _, token := startOwner(t, dir, PolicyAsk)
		_, err := Takeover(context.Background(), Options{Dir: dir}, opt)
		var nw *NotWedgedError
		if !errors.As(err, &nw) || !errors.Is(err, ErrNotWedged) || nw.Left != 0 || !strings.Contains(nw.Reason, "heartbeats") {
			t.Fatalf("kill-wedged against a healthy owner: %v, want a *NotWedgedError saying it heartbeats, no time left", err)
		}
		if !pidExists(owner.pid()) {
			t.Fatal("healthy owner was killed")
		}
		assertOwnedBy(t, dir, owner, token)
	})
	// A wedged process that still runs exits on SIGTERM; a stopped one cannot act on it and is
	// ended by the SIGKILL after the grace period.
	for _, tc := range []struct {
		name   string
		wedge  func(*proc)
		signal syscall.Signal
	}{
		{"running-wedged-terminated", func(p *proc) { p.send("wedge"); p.expect("wedged", long) }, syscall.SIGTERM},
		{"stopped-killed", func(p *proc) {
			if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		}, syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testDir(t)
			owner, epoch, _ := startOwner(t, dir, PolicyAsk)
			tc.wedge(owner)
			h, err := Takeover(context.Background(), Options{Dir: dir}, opt)
			if err != nil {
				t.Fatalf("kill-wedged against a wedged owner: %v", err)
			}
			defer h.Release(context.Background())
			receive(t, owner.exited, "the wedged owner to exit")
			ws := owner.cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != tc.signal {
				t.Fatalf("owner ended by %v, want %v", owner.cmd.ProcessState, tc.signal)
			}
			if h.Epoch() <= epoch {
				t.Fatalf("epoch %d after wedged owner's %d", h.Epoch(), epoch)
			}
		})
	}
}

// A heartbeating owner whose scheduler does not handle a due slot is reported stalled.
func TestStalledDiagnosis(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, HeartbeatInterval: 100 * time.Millisecond})
	h.NoteTick(time.Now().Add(time.Hour))
	eventually(t, long, "healthy with work scheduled", func() bool {
		st, _ := Inspect(dir)
		return st.Healthy() && st.Record.Progress == 1
	})
	h.NoteTick(time.Now().Add(-2 * stallGrace))
	eventually(t, long, "stalled reported", func() bool {
		st, _ := Inspect(dir)
		return hasDiag(st, DiagStalled) && !hasDiag(st, DiagNotHeartbeating)
	})
}

// The Observer judges staleness on its own clock: a record that stops changing is
// not-heartbeating after 3 intervals of observer time, even if its wall-clock timestamp is fresh.
func TestObserverUsesItsOwnClock(t *testing.T) {
	dir := testDir(t)
	now := time.Now()
	id, host := self()
	rec := Record{Token: "tok", Epoch: 1, PID: id.PID, PIDStartMS: id.StartMS, PIDStartTicks: id.StartTicks,
		Host: host, UID: os.Getuid(), HeartbeatAt: now.Add(time.Hour), HeartbeatIntervalMS: 1000, State: StateOwning}
	if err := writeJSONAtomic(dir, recordName, rec, false); err != nil {
		t.Fatal(err)
	}
	holder := startHelper(t, "bareflock", dir)
	holder.expect("owned", long)
	// The record names this test process, but the lock is the helper's: fix the record to the holder.
	hid, _ := identify(holder.pid())
	rec.PID, rec.PIDStartMS, rec.PIDStartTicks = hid.PID, hid.StartMS, hid.StartTicks
	if err := writeJSONAtomic(dir, recordName, rec, false); err != nil {
		t.Fatal(err)
	}
	fake := now
	obs := NewObserver(dir)
	obs.now = func() time.Time { return fake }
	st, err := obs.Observe()
	if err != nil || !st.Healthy() {
		t.Fatalf("first look: %+v %v", st, err)
	}
	fake = fake.Add(2 * time.Second)
	if st, _ := obs.Observe(); !st.Healthy() {
		t.Fatalf("after 2 intervals: %+v", st.Diagnoses)
	}
	fake = fake.Add(2 * time.Second)
	if st, _ := obs.Observe(); !hasDiag(st, DiagNotHeartbeating) {
		t.Fatalf("after 4 unchanged intervals: %+v, want not-heartbeating", st.Diagnoses)
	}
	rec.HeartbeatAt = rec.HeartbeatAt.Add(time.Second)
	if err := writeJSONAtomic(dir, recordName, rec, false); err != nil {
		t.Fatal(err)
	}
	if st, _ := obs.Observe(); !st.Healthy() {
		t.Fatalf("after a new heartbeat: %+v", st.Diagnoses)
	}
}

// lock-held-by-other: the guard is held but the recorded owner is another (dead) process.
func TestLockHeldByOtherNamesHolder(t *testing.T) {
	dir := testDir(t)
	holder := startHelper(t, "bareflock", dir)
	holder.expect("owned", long)
	host := selfHost()
	rec := Record{Token: "tok", Epoch: 3, PID: 1 << 22, Host: host, HeartbeatAt: time.Now(), HeartbeatIntervalMS: 1000, State: StateOwning}
	if err := writeJSONAtomic(dir, recordName, rec, false); err != nil {
		t.Fatal(err)
	}
	st, err := Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !hasDiag(st, DiagLockHeldByOther) || st.HolderPID != holder.pid() ||
		!strings.Contains(st.Diagnoses[0].Message, fmt.Sprint(holder.pid())) {
		t.Fatalf("status %+v, want lock-held-by-other naming %d", st, holder.pid())
	}
}

// An Observer (the desktop app's owner panel) reports an unreadable owner.json like Inspect does.
func TestObserverReportsUnreadableRecord(t *testing.T) {
	dir := testDir(t)
	holder := startHelper(t, "bareflock", dir)
	holder.expect("owned", long)
	if err := os.WriteFile(filepath.Join(dir, recordName), []byte(`{"token":`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Inspect(dir)
	if err != nil || !hasDiag(st, DiagRecordUnreadable) {
		t.Fatalf("Inspect: %+v %v, want record-unreadable", st.Diagnoses, err)
	}
	obs := NewObserver(dir)
	for look := 1; look <= 2; look++ {
		st, err := obs.Observe()
		if err != nil || !hasDiag(st, DiagRecordUnreadable) {
			t.Fatalf("Observe #%d: %+v %v, want record-unreadable", look, st.Diagnoses, err)
		}
	}
}

// signalPending reports whether sig is pending for process pid (proc(5) /proc/PID/status ShdPnd).
func signalPending(t *testing.T, pid int, sig syscall.Signal) bool {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if hex, ok := strings.CutPrefix(line, "ShdPnd:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

// An owner judged wedged that comes back on SIGTERM (a stopped daemon continued with `fg`) and
// shuts down gracefully, heartbeating while it drains, is not SIGKILLed: an owner with a fresh
// heartbeat is never signalled. The challenger owns once it has released.
func TestKillWedgedSparesOwnerThatResumes(t *testing.T) {
	defer func(g time.Duration) { killGrace = g }(killGrace)
	killGrace = 3 * time.Second
	dir := testDir(t)
	owner := startHelper(t, "contender", dir, envOnTerm+"=4000")
	owner.send("acquire")
	epoch, _, _, token := parseOwned(t, owner.expect("owned", long))
	eventually(t, long, "owner record written", func() bool {
		r, _ := readRecord(dir)
		return r != nil && r.Token == token
	})
	if err := owner.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	type result struct {
		h   *Handle
		err error
	}
	res := make(chan result, 1)
	go func() {
		h, err := Takeover(context.Background(), Options{Dir: dir},
			TakeoverOptions{Timeout: 1500 * time.Millisecond, KillWedged: true, WedgeThreshold: time.Second})
		res <- result{h, err}
	}()
	eventually(t, long, "SIGTERM pending at the stopped owner", func() bool {
		return signalPending(t, owner.pid(), syscall.SIGTERM)
	})
	if err := owner.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	owner.expect("sigterm", long)
	r := receive(t, res, "Takeover")
	if r.err != nil {
		t.Fatalf("Takeover after the owner shut down: %v", r.err)
	}
	defer r.h.Release(context.Background())
	receive(t, owner.exited, "the owner to exit")
	if ws := owner.cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() || ws.ExitStatus() != 0 {
		t.Fatalf("owner shutting down gracefully was ended by %v", owner.cmd.ProcessState)
	}
	if r.h.Epoch() <= epoch {
		t.Fatalf("epoch %d after the owner's %d", r.h.Epoch(), epoch)
	}
}

// Kill-wedged refuses an owner silent for less than the threshold, saying how long it has been
// silent and how long is left; both clocks count: the record's age, and this process's own
// watch (an old heartbeat seen only briefly could be a wall-clock step).
func TestKillWedgedTooEarlySaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name               string
		suspended, timeout time.Duration // how long the owner is stopped before the challenge; its timeout
		threshold          time.Duration
		says               string
	}{
		{"record-too-young", 0, 500 * time.Millisecond, 10 * time.Second, "an owner is ended only after 10s without one"},
		{"watched-too-briefly", 1500 * time.Millisecond, 300 * time.Millisecond, time.Second, "this command watched it for only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testDir(t)
			owner, _, token := startOwner(t, dir, PolicyAsk)
			if err := owner.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			defer owner.cmd.Process.Signal(syscall.SIGCONT)
			time.Sleep(tc.suspended + 500*time.Millisecond) // past staleBeats × 100 ms: silent, not busy
			_, err := Takeover(context.Background(), Options{Dir: dir},
				TakeoverOptions{Timeout: tc.timeout, KillWedged: true, WedgeThreshold: tc.threshold})
			var nw *NotWedgedError
			if !errors.As(err, &nw) {
				t.Fatalf("kill-wedged against a briefly silent owner: %v, want *NotWedgedError", err)
			}
			if !strings.Contains(nw.Reason, "has not written a heartbeat for") || !strings.Contains(nw.Reason, tc.says) ||
				!strings.Contains(nw.Reason, "to go") {
				t.Errorf("reason %q, want the silence, %q and the time to go", nw.Reason, tc.says)
			}
			if nw.Threshold != tc.threshold || nw.Left <= 0 || nw.Left >= tc.threshold || nw.Silent+nw.Left != tc.threshold {
				t.Errorf("silent %s, left %s, threshold %s: want silent + left = threshold %s", nw.Silent, nw.Left, nw.Threshold, tc.threshold)
			}
			if signalPending(t, owner.pid(), syscall.SIGTERM) || !pidExists(owner.pid()) {
				t.Fatal("the owner was signalled")
			}
			if err := owner.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			assertOwnedBy(t, dir, owner, token)
		})
	}
}

// Kill-wedged refuses when owner.lock is held by a process other than the one owner.json names,
// and the refusal names the real holder.
func TestKillWedgedRefusesMismatchedHolder(t *testing.T) {
	dir := testDir(t)
	holder := startHelper(t, "bareflock", dir)
	holder.expect("owned", long)
	// The record names this (live) test process, long silent: everything but the holder fits.
	id, host := self()
	old := time.Now().Add(-time.Hour)
	rec := Record{Token: "tok", Epoch: 3, PID: id.PID, PIDStartMS: id.StartMS, PIDStartTicks: id.StartTicks,
		Host: host, UID: os.Getuid(), HeartbeatAt: old, HeartbeatIntervalMS: 100, State: StateOwning}
	if err := writeJSONAtomic(dir, recordName, rec, false); err != nil {
		t.Fatal(err)
	}
	_, err := Takeover(context.Background(), Options{Dir: dir},
		TakeoverOptions{Timeout: 300 * time.Millisecond, KillWedged: true, WedgeThreshold: 100 * time.Millisecond})
	var nw *NotWedgedError
	if !errors.As(err, &nw) || !strings.Contains(nw.Reason, fmt.Sprintf("held by pid %d, not by the recorded owner pid %d", holder.pid(), id.PID)) {
		t.Fatalf("kill-wedged with a mismatched holder: %v, want a refusal naming holder pid %d", err, holder.pid())
	}
	if !pidExists(holder.pid()) {
		t.Fatal("the lock holder was signalled")
	}
}

// Kill-wedged never ends an owner whose last record says its journal cannot be written: on a
// full disk the record can go stale too, and that silence is the disk's, not a wedged owner's.
func TestKillWedgedSparesAnOwnerOnAFullDisk(t *testing.T) {
	dir := testDir(t)
	holder := startHelper(t, "bareflock", dir)
	holder.expect("owned", long)
	id, err := identify(holder.pid())
	if err != nil {
		t.Fatal(err)
	}
	host := selfHost()
	old := time.Now().Add(-time.Hour)
	rec := Record{Token: "tok", Epoch: 3, PID: id.PID, PIDStartMS: id.StartMS, PIDStartTicks: id.StartTicks,
		Host: host, UID: os.Getuid(), HeartbeatAt: old, HeartbeatIntervalMS: 100, State: StateOwning,
		JournalUnwritable: &JournalTrouble{Since: old, Error: "database or disk is full"}}
	if err := writeJSONAtomic(dir, recordName, rec, false); err != nil {
		t.Fatal(err)
	}
	_, err = Takeover(context.Background(), Options{Dir: dir},
		TakeoverOptions{Timeout: 300 * time.Millisecond, KillWedged: true, WedgeThreshold: 100 * time.Millisecond})
	var nw *NotWedgedError
	if !errors.As(err, &nw) || !strings.Contains(nw.Reason, "free space rather than ending it") {
		t.Fatalf("kill-wedged against an owner on a full disk: %v, want a refusal saying to free space", err)
	}
	if signalPending(t, holder.pid(), syscall.SIGTERM) || !pidExists(holder.pid()) {
		t.Fatal("the owner on a full disk was signalled")
	}
}

// EndWedged (the desktop app's "End the stuck owner") follows the kill-wedged rules on the
// Observer that watched the owner: CheckWedged refuses until the silence has held for the
// threshold on that Observer's clock, with the time left; a pid other than the one agreed to is
// never signalled; then the stopped owner is ended (SIGKILL after the grace) and the caller owns
// at a higher epoch.
func TestEndWedgedWithTheWatchingObserver(t *testing.T) {
	defer func(g time.Duration) { killGrace = g }(killGrace)
	killGrace = time.Second
	const threshold = 1500 * time.Millisecond
	dir := testDir(t)
	owner, epoch, token := startOwner(t, dir, PolicyAsk)
	obs := NewObserver(dir)
	st, err := obs.Observe()
	if err != nil {
		t.Fatal(err)
	}
	var nw *NotWedgedError
	if err := obs.CheckWedged(st, threshold); !errors.As(err, &nw) || !strings.Contains(nw.Reason, "heartbeats") {
		t.Fatalf("CheckWedged on a healthy owner: %v, want refused as busy", err)
	}
	if err := owner.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer owner.cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(500 * time.Millisecond) // past staleBeats × 100 ms: silent, but not for the threshold
	st, _ = obs.Observe()
	if err := obs.CheckWedged(st, threshold); !errors.As(err, &nw) || nw.Left <= 0 || nw.Left >= threshold {
		t.Fatalf("CheckWedged after a short silence: %v, want refused with the time left", err)
	}
	eventually(t, long, "the silence to hold for the threshold", func() bool {
		st, err := obs.Observe()
		return err == nil && obs.CheckWedged(st, threshold) == nil
	})

	_, err = EndWedged(context.Background(), Options{Dir: dir}, obs, EndWedgedOptions{Threshold: threshold, PID: owner.pid() + 1})
	if !errors.As(err, &nw) || !strings.Contains(nw.Reason, "nothing was signalled") {
		t.Fatalf("EndWedged naming another pid: %v, want refused", err)
	}
	if signalPending(t, owner.pid(), syscall.SIGTERM) || !pidExists(owner.pid()) {
		t.Fatal("an owner other than the one agreed to was signalled")
	}
	assertOwnedBy(t, dir, owner, token)

	h, err := EndWedged(context.Background(), Options{Dir: dir}, obs, EndWedgedOptions{Threshold: threshold, PID: owner.pid()})
	if err != nil {
		t.Fatalf("EndWedged against the stopped owner: %v", err)
	}
	defer h.Release(context.Background())
	receive(t, owner.exited, "the stopped owner to exit")
	if ws := owner.cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("owner ended by %v, want SIGKILL (a stopped process cannot act on SIGTERM)", owner.cmd.ProcessState)
	}
	if h.Epoch() <= epoch {
		t.Fatalf("epoch %d after the stuck owner's %d", h.Epoch(), epoch)
	}
}

// CheckWedged refuses when nobody holds the guard: there is nothing to end.
func TestCheckWedgedWithoutOwner(t *testing.T) {
	dir := testDir(t)
	obs := NewObserver(dir)
	st, err := obs.Observe()
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.CheckWedged(st, time.Second); !errors.Is(err, ErrNotWedged) {
		t.Fatalf("CheckWedged with no owner: %v, want ErrNotWedged", err)
	}
}

// A heartbeat stamped later than the look (written after Inspect took its time, or by a clock
// that ran ahead) is age 0, never negative: status once printed "Heartbeat: -9ms ago".
func TestHeartbeatAgeIsNeverNegative(t *testing.T) {
	dir := testDir(t)
	id, host := self()
	rec := Record{Token: "tok", Epoch: 1, PID: id.PID, PIDStartMS: id.StartMS, PIDStartTicks: id.StartTicks,
		Host: host, UID: os.Getuid(), HeartbeatAt: time.Now().Add(9 * time.Millisecond), HeartbeatIntervalMS: 1000, State: StateOwning}
	if err := writeJSONAtomic(dir, recordName, rec, false); err != nil {
		t.Fatal(err)
	}
	st, err := Inspect(dir)
	if err != nil || st.Record == nil {
		t.Fatalf("Inspect: %+v, %v", st, err)
	}
	if st.HeartbeatAge != 0 {
		t.Fatalf("heartbeat 9 ms ahead of the look: age %v, want 0", st.HeartbeatAge)
	}
}
