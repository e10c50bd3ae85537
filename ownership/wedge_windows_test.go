package ownership

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The Windows counterparts of the SIGSTOP tests in wedge_test.go: a suspended process
// (NtSuspendProcess, as a sleeping machine or a debugger leaves it) runs no code but keeps its
// handles, so it keeps the guard; TerminateProcess is the only way to end it, and it is what
// kill-wedged uses (kill_windows.go).

// Kill-wedged never touches an owner with a fresh heartbeat, and ends a wedged one, running or
// suspended, with TerminateProcess: the challenger then owns with a higher epoch.
func TestKillWedgedTerminatesOnWindows(t *testing.T) {
	defer func(g time.Duration) { killGrace = g }(killGrace)
	killGrace = 2 * time.Second
	opt := TakeoverOptions{Timeout: 1500 * time.Millisecond, KillWedged: true, WedgeThreshold: time.Second}

	t.Run("healthy-refused", func(t *testing.T) {
		dir := testDir(t)
		owner, _, token := startOwner(t, dir, PolicyAsk)
		_, err := Takeover(context.Background(), Options{Dir: dir}, opt)
		var nw *NotWedgedError
		if !errors.As(err, &nw) || nw.Left != 0 || !strings.Contains(nw.Reason, "heartbeats") {
			t.Fatalf("kill-wedged against a healthy owner: %v, want a *NotWedgedError saying it heartbeats", err)
		}
		if !pidExists(owner.pid()) {
			t.Fatal("healthy owner was killed")
		}
		assertOwnedBy(t, dir, owner, token)
	})
	for _, tc := range []struct {
		name  string
		wedge func(*proc)
	}{
		{"running-wedged", func(p *proc) { p.send("wedge"); p.expect("wedged", long) }},
		{"suspended", func(p *proc) { suspend(t, p) }},
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
			// os.Process.Kill is TerminateProcess(handle, 1); the helper itself only ever exits 0
			// (released) or 2 (bad mode).
			if code := owner.cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("owner exited %d, want 1 (TerminateProcess)", code)
			}
			if h.Epoch() <= epoch {
				t.Fatalf("epoch %d after wedged owner's %d", h.Epoch(), epoch)
			}
		})
	}
}

// Kill-wedged refuses an owner suspended for less than the threshold, saying how long is left,
// and leaves it running; resumed, it still owns.
func TestKillWedgedTooEarlySparesSuspendedOwner(t *testing.T) {
	dir := testDir(t)
	owner, _, token := startOwner(t, dir, PolicyAsk)
	suspend(t, owner)
	defer resume(t, owner)
	time.Sleep(500 * time.Millisecond) // past staleBeats × 100 ms: silent, not busy
	threshold := 10 * time.Second
	_, err := Takeover(context.Background(), Options{Dir: dir},
		TakeoverOptions{Timeout: 500 * time.Millisecond, KillWedged: true, WedgeThreshold: threshold})
	var nw *NotWedgedError
	if !errors.As(err, &nw) || !strings.Contains(nw.Reason, "an owner is ended only after 10s without one") || nw.Left <= 0 {
		t.Fatalf("kill-wedged against a briefly silent owner: %v, want a *NotWedgedError with time left", err)
	}
	if !pidExists(owner.pid()) {
		t.Fatal("the owner was terminated")
	}
	resume(t, owner)
	assertOwnedBy(t, dir, owner, token)
}
