//go:build linux || windows

package ownership

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startOwner starts a helper that owns dir with policy and returns it with its epoch and token.
func startOwner(t *testing.T, dir string, policy Policy) (*proc, uint64, string) {
	t.Helper()
	p := startHelper(t, "contender", dir, envPolicy+"="+string(policy))
	p.send("acquire")
	epoch, _, _, token := parseOwned(t, p.expect("owned", long))
	eventually(t, long, "owner record written", func() bool {
		r, _ := readRecord(dir)
		return r != nil && r.Token == token
	})
	return p, epoch, token
}

// progressLog collects TakeoverProgress decisions.
type progressLog struct {
	mu   sync.Mutex
	seen []Decision
}

func (l *progressLog) add(p TakeoverProgress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, p.Decision)
}

func (l *progressLog) has(d Decision) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.seen {
		if s == d {
			return true
		}
	}
	return false
}

func assertNoTakeoverFiles(t *testing.T, dir string) {
	t.Helper()
	eventually(t, long, "takeover files removed", func() bool {
		_, e1 := os.Stat(filepath.Join(dir, requestName))
		_, e2 := os.Stat(filepath.Join(dir, replyName))
		return errors.Is(e1, fs.ErrNotExist) && errors.Is(e2, fs.ErrNotExist)
	})
}

// assertStillOwning checks that p still holds the guard with the same token and admits runs.
func assertStillOwning(t *testing.T, dir string, p *proc, token string) {
	t.Helper()
	assertOwnedBy(t, dir, p, token)
	p.send("admitting")
	if f := p.expect("admitting", long); f[1] != "true" {
		t.Fatalf("owner stopped admitting: %q", f)
	}
}

// assertOwnedBy checks that p still holds the guard with the same token.
func assertOwnedBy(t *testing.T, dir string, p *proc, token string) {
	t.Helper()
	st, err := Inspect(dir)
	if err != nil || !heldBy(st, p.pid()) || st.Record == nil || st.Record.Token != token {
		t.Fatalf("want owner pid %d token %s, got %+v (%v)", p.pid(), token, st, err)
	}
}

func TestTakeoverApproved(t *testing.T) {
	dir := testDir(t)
	owner, epoch, _ := startOwner(t, dir, PolicyAllow)
	h, err := Takeover(context.Background(), Options{Dir: dir}, TakeoverOptions{Timeout: long, Reason: "test"})
	if err != nil {
		t.Fatalf("Takeover: %v", err)
	}
	t.Cleanup(func() { _ = h.Release(context.Background()) })
	if h.Epoch() <= epoch {
		t.Fatalf("new epoch %d not above %d", h.Epoch(), epoch)
	}
	// The old owner sees its successor own (it checks before it ends) well before it would give
	// up waiting for one.
	owned := time.Now()
	owner.expect("lost "+ErrReleased.Error(), long)
	if d := time.Since(owned); d > handoverWait/2 {
		t.Fatalf("the old owner took %s to see the challenger own", d)
	}
	assertNoTakeoverFiles(t, dir)
	if st, _ := Inspect(dir); !heldBy(st, os.Getpid()) || st.Record.Token != h.Token() {
		t.Fatalf("after takeover: %+v", st)
	}
}

func TestTakeoverDenied(t *testing.T) {
	dir := testDir(t)
	owner, _, token := startOwner(t, dir, PolicyDeny)
	var pl progressLog
	_, err := Takeover(context.Background(), Options{Dir: dir}, TakeoverOptions{Timeout: long, Progress: pl.add})
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("Takeover against a denying owner: %v", err)
	}
	if !pl.has(DecisionDenied) {
		t.Fatalf("progress %v lacks denied", pl.seen)
	}
	assertNoTakeoverFiles(t, dir)
	assertOwnedBy(t, dir, owner, token)
}

func TestTakeoverOwnerNeverAnswers(t *testing.T) {
	dir := testDir(t)
	owner, _, token := startOwner(t, dir, PolicyAsk)
	var pl progressLog
	_, err := Takeover(context.Background(), Options{Dir: dir}, TakeoverOptions{Timeout: 1500 * time.Millisecond, Progress: pl.add})
	if !errors.Is(err, ErrTakeoverTimeout) {
		t.Fatalf("Takeover against a silent owner: %v", err)
	}
	if !pl.has(DecisionPending) {
		t.Fatalf("progress %v lacks pending (the owner saw the request)", pl.seen)
	}
	owner.expect("request", long)
	owner.expect("event "+string(EventTakeoverResolved), long) // withdrawn
	assertNoTakeoverFiles(t, dir)
	assertStillOwning(t, dir, owner, token)
}

// A challenger SIGKILLed mid-request: the owner drops the request and a late approval is refused.
func TestTakeoverChallengerKilled(t *testing.T) {
	dir := testDir(t)
	owner, _, token := startOwner(t, dir, PolicyAsk)
	ch := startHelper(t, "takeover", dir, envTimeout+"=60000")
	ch.expect("progress pending", long)
	id := owner.expect("request", long)[1]
	ch.kill()
	assertNoTakeoverFiles(t, dir)
	owner.send("decide " + id + " approve")
	if f := owner.expect("decided", long); len(f) < 2 || f[1] == "<nil>" {
		t.Fatalf("approval of a dead challenger's request accepted: %q", f)
	}
	assertStillOwning(t, dir, owner, token)
}

// Requests the owner must ignore and remove: dead requester, another uid, another token, expired.
func TestTakeoverInvalidRequestsIgnored(t *testing.T) {
	dir := testDir(t)
	owner, _, token := startOwner(t, dir, PolicyAllow)
	deadPID := exitedPID(t)
	id, host := self()
	base := func() Request {
		return Request{ID: "r-" + time.Now().Format("150405.000000"), TargetToken: token,
			Requester:   Requester{PID: id.PID, PIDStartMS: id.StartMS, PIDStartTicks: id.StartTicks, Host: host, UID: os.Getuid()},
			RequestedAt: time.Now(), ExpiresAt: time.Now().Add(time.Minute)}
	}
	cases := map[string]func(*Request) (chownTo int){
		"dead-requester": func(r *Request) int { r.Requester.PID = deadPID; return -1 },
		"other-token":    func(r *Request) int { r.TargetToken = "someone-else"; return -1 },
		"expired":        func(r *Request) int { r.ExpiresAt = time.Now().Add(-time.Second); return -1 },
		"other-host":     func(r *Request) int { r.Requester.Host = "elsewhere.example"; return -1 },
		"other-uid": func(r *Request) int {
			r.Requester.UID = 65534
			return 65534
		},
		// Claims to be this user, but the file (as opened and fstat'ed) belongs to another.
		"file-of-other-uid": func(*Request) int { return 65534 },
	}
	if runtime.GOOS == "windows" {
		// Windows trusts the state directory's ACL and never compares a file's owner (fileOwner
		// in fileuid_windows.go), so this request would be a valid one from this process.
		delete(cases, "file-of-other-uid")
	}
	for name, mut := range cases {
		req := base()
		chownTo := mut(&req)
		// Prepared under another name, then renamed in, as a real challenger does.
		if err := writeJSONAtomic(dir, "prepared.json", req, false); err != nil {
			t.Fatal(err)
		}
		if chownTo >= 0 && os.Getuid() == 0 {
			if err := os.Chown(filepath.Join(dir, "prepared.json"), chownTo, chownTo); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(filepath.Join(dir, "prepared.json"), filepath.Join(dir, requestName)); err != nil {
			t.Fatal(err)
		}
		eventually(t, long, name+" request removed", func() bool {
			_, err := os.Stat(filepath.Join(dir, requestName))
			return errors.Is(err, fs.ErrNotExist)
		})
		assertOwnedBy(t, dir, owner, token)
	}
	if _, ok := owner.next("lost", 300*time.Millisecond); ok {
		t.Fatal("owner yielded to an invalid request")
	}
}

// PolicyAsk in the desktop app: OnRequest, Pending and Events carry the request; Decide approves;
// the owner drains its in-flight run before the challenger owns.
func TestTakeoverAskDrainsThenYields(t *testing.T) {
	dir := testDir(t)
	asked := make(chan Request, 1)
	h, err := Acquire(context.Background(), Options{Dir: dir, Role: RoleDesktop, Policy: PolicyAsk,
		HeartbeatInterval: 100 * time.Millisecond, OnRequest: func(r Request) { asked <- r }})
	if err != nil {
		t.Fatal(err)
	}
	done, err := h.BeginRun("briefing", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ch := startHelper(t, "takeover", dir, envTimeout+"=60000")
	req := receive(t, asked, "OnRequest")
	ch.expect("progress pending", long)
	if p := h.Pending(); p == nil || p.ID != req.ID {
		t.Fatalf("Pending %+v, want %s", p, req.ID)
	}
	if err := h.Decide("nope", true); !errors.Is(err, ErrNoRequest) {
		t.Fatalf("Decide unknown id: %v", err)
	}
	if err := h.Decide(req.ID, true); err != nil {
		t.Fatal(err)
	}
	eventually(t, long, "owner stops admitting", func() bool { return !h.Admitting() })
	if _, err := h.BeginRun("late", time.Now()); !errors.Is(err, ErrNotAdmitting) {
		t.Fatalf("BeginRun while yielding: %v", err)
	}
	eventually(t, long, "observer reports draining", func() bool {
		st, _ := Inspect(dir)
		return len(st.Diagnoses) > 0 && st.Diagnoses[0].Kind == DiagDraining
	})
	if f, ok := ch.next("owned", 500*time.Millisecond); ok {
		t.Fatalf("challenger owned while a run was in flight: %q", f)
	}
	done()
	epoch, _, _, _ := parseOwned(t, ch.expect("owned", long))
	if epoch <= h.Epoch() {
		t.Fatalf("challenger epoch %d not above %d", epoch, h.Epoch())
	}
	<-h.Lost()
	var kinds []EventKind
	for ev := range h.Events() {
		kinds = append(kinds, ev.Kind)
	}
	want := []EventKind{EventTakeoverRequested, EventYielding, EventTakeoverResolved, EventReleased}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
}

// With no owner, Takeover simply acquires.
func TestTakeoverWithoutOwnerAcquires(t *testing.T) {
	dir := testDir(t)
	h, err := Takeover(context.Background(), Options{Dir: dir}, TakeoverOptions{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(context.Background())
	if h.Epoch() != 1 {
		t.Fatalf("epoch %d", h.Epoch())
	}
}

// A challenger that gives up (Ctrl-C) withdraws its request; the owner forgets it and keeps owning.
func TestTakeoverCancelledWithdraws(t *testing.T) {
	dir := testDir(t)
	owner, _, token := startOwner(t, dir, PolicyAsk)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Takeover(ctx, Options{Dir: dir}, TakeoverOptions{Timeout: long, Progress: func(p TakeoverProgress) {
		if p.Decision == DecisionPending {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Takeover: %v", err)
	}
	owner.expect("event "+string(EventTakeoverResolved), long)
	assertNoTakeoverFiles(t, dir)
	assertOwnedBy(t, dir, owner, token)
}

// The owner notices a request through the file watch, long before its next heartbeat, and
// answers "pending" at once.
func TestOwnerNoticesRequestWithinOneSecond(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, Policy: PolicyAsk, HeartbeatInterval: time.Minute})
	ch := startHelper(t, "takeover", dir, envTimeout+"=60000")
	ch.expect("progress ", long) // request written, no decision yet
	written := time.Now()
	ch.expect("progress pending", long)
	if d := time.Since(written); d > time.Second {
		t.Fatalf("owner answered pending %s after the request (heartbeat 1 min), want within 1 s", d)
	}
	if h.Pending() == nil {
		t.Fatal("no pending request on the handle")
	}
	ch.kill()
}

// testRequest returns a takeover request addressed to token whose requester is this test
// process (alive, same user and host), expiring in a minute.
func testRequest(token string) Request {
	id, host := self()
	now := time.Now()
	return Request{ID: "r-" + now.Format("150405.000000000"), TargetToken: token,
		Requester:   Requester{PID: id.PID, PIDStartMS: id.StartMS, PIDStartTicks: id.StartTicks, Host: host, UID: os.Getuid()},
		RequestedAt: now, ExpiresAt: now.Add(time.Minute)}
}

// An owner draining for an approved request keeps the routines when the challenger dies before
// the last run ends: it never yields to a requester that is gone, which would leave the
// routines unowned.
func TestDrainAbandonedWhenChallengerDies(t *testing.T) {
	dir := testDir(t)
	// A heartbeat a minute away: only the end of the run can prompt the release.
	h := acquireT(t, Options{Dir: dir, HeartbeatInterval: time.Minute})
	done, err := h.BeginRun("backup", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ch := startHelper(t, "takeover", dir, envTimeout+"=60000")
	ch.expect("progress "+string(DecisionApproved), long)
	eventually(t, long, "owner draining", func() bool { return !h.Admitting() })
	ch.kill() // SIGKILL: its takeover.json stays behind
	done()
	eventually(t, long, "owner admitting again", h.Admitting)
	if err := h.Err(); err != nil {
		t.Fatalf("owner gave up the routines to a dead challenger: %v", err)
	}
	if st, _ := Inspect(dir); !heldBy(st, os.Getpid()) {
		t.Fatalf("guard after the challenger died: %+v", st)
	}
	assertNoTakeoverFiles(t, dir)
}

// A user's approval arriving after the request was withdrawn and another took its place is not
// applied to the newcomer: the owner keeps owning and asks about the new request.
func TestApprovalOfReplacedRequestIgnored(t *testing.T) {
	dir := testDir(t)
	var handle atomic.Pointer[Handle]
	first, second := make(chan Request, 1), make(chan Request, 1)
	var replaced sync.Once
	h := acquireT(t, Options{Dir: dir, Policy: PolicyAsk, HeartbeatInterval: time.Minute,
		OnRequest: func(r Request) {
			handle := handle.Load()
			asked := false
			replaced.Do(func() {
				asked = true
				// The challenger withdraws and another writes its own request; the user then
				// clicks Approve on the prompt for the first one.
				next := testRequest(handle.Token())
				if err := writeJSONAtomic(dir, requestName, next, false); err != nil {
					t.Error(err)
				}
				_ = handle.Decide(r.ID, true) // may already be ErrNoRequest
				first <- r
			})
			if !asked {
				second <- r
			}
		}})
	handle.Store(h)
	a := testRequest(h.Token())
	if err := writeJSONAtomic(dir, requestName, a, false); err != nil {
		t.Fatal(err)
	}
	receive(t, first, "OnRequest")
	select {
	case b := <-second:
		if b.ID == a.ID {
			t.Fatalf("asked about %s again", a.ID)
		}
	case <-h.Lost():
		t.Fatalf("owner yielded for a withdrawn request: %v", h.Err())
	case <-time.After(long):
		t.Fatal("the new request was never asked about")
	}
	if !h.Admitting() || h.Err() != nil {
		t.Fatalf("owner after a stale approval: admitting=%v err=%v", h.Admitting(), h.Err())
	}
}

// OnRequest may be slow (a careless UI that waits for the user): the heartbeat goes on, so no
// observer sees a wedge and kill-wedged never ends an owner that is asking its user.
func TestSlowOnRequestKeepsHeartbeat(t *testing.T) {
	dir := testDir(t)
	interval := 100 * time.Millisecond
	entered, unblock := make(chan Request, 1), make(chan struct{})
	h := acquireT(t, Options{Dir: dir, Policy: PolicyAsk, HeartbeatInterval: interval,
		OnRequest: func(r Request) { entered <- r; <-unblock }})
	t.Cleanup(func() { close(unblock) }) // before the Release registered by acquireT
	req := testRequest(h.Token())
	if err := writeJSONAtomic(dir, requestName, req, false); err != nil {
		t.Fatal(err)
	}
	receive(t, entered, "OnRequest")
	since := time.Now()
	eventually(t, long, "heartbeats while OnRequest blocks", func() bool {
		r, _ := readRecord(dir)
		return r != nil && r.HeartbeatAt.After(since.Add(3*interval))
	})
	if err := h.Decide(req.ID, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, long, "denial written while OnRequest blocks", func() bool {
		r := readReply(dir)
		return r != nil && r.RequestID == req.ID && r.Decision == DecisionDenied
	})
}

// Release says "yielding" in owner.json at once, not at the next heartbeat: observers see the
// drain from its first moment (this owner's heartbeat is an hour apart).
func TestReleaseWritesYieldingAtOnce(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, HeartbeatInterval: time.Hour})
	done, err := h.BeginRun("r", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(done) // before acquireT's Release, which waits for the run
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	released := make(chan error, 1)
	go func() { released <- h.Release(ctx) }()
	eventually(t, time.Second, "owner.json saying yielding with one run in flight", func() bool {
		r, _ := readRecord(dir)
		return r != nil && r.State == StateYielding && r.InFlight == 1 && !r.YieldingSince.IsZero()
	})
	if st, _ := Inspect(dir); !hasDiag(st, DiagDraining) {
		t.Fatalf("Inspect during the drain: %+v, want draining", st.Diagnoses)
	}
	cancel()
	<-released
	done()
	receive(t, h.Lost(), "the release once the run ended")
}
