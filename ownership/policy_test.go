//go:build linux

package ownership

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SetPolicy changes how the next request is answered: an owner acquired with "deny" that is
// switched to "allow" hands over to a real challenger process; a bad policy is refused and the
// current one kept.
func TestSetPolicyAppliesToTheNextRequest(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, Policy: PolicyDeny, HeartbeatInterval: 100 * time.Millisecond})
	if h.Policy() != PolicyDeny {
		t.Fatalf("Policy = %q, want deny", h.Policy())
	}
	if err := h.SetPolicy("sometimes"); !errors.Is(err, ErrUnknownPolicy) || h.Policy() != PolicyDeny {
		t.Fatalf("SetPolicy(sometimes) = %v, policy %q; want ErrUnknownPolicy and deny kept", err, h.Policy())
	}
	first := startHelper(t, "takeover", dir, envTimeout+"=20000")
	if f := first.expect("error", long); !strings.Contains(strings.Join(f, " "), ErrDenied.Error()) {
		t.Fatalf("challenger under deny: %q, want denied", f)
	}
	if err := h.SetPolicy(PolicyAllow); err != nil || h.Policy() != PolicyAllow {
		t.Fatalf("SetPolicy(allow) = %v, policy %q", err, h.Policy())
	}
	second := startHelper(t, "takeover", dir, envTimeout+"=20000")
	second.expect("owned", long)
	<-h.Lost()
	if !errors.Is(h.Err(), ErrReleased) {
		t.Fatalf("Err after the allowed takeover: %v", h.Err())
	}
}

// An unanswered request (policy ask) is refused at its deadline by the handle itself, even when
// the next heartbeat is far off and the challenger, stopped by SIGSTOP, never withdraws it:
// Pending stops reporting it, Decide refuses it, and the handle reports it resolved within a
// moment of expires_at; the owner keeps the routines.
func TestUnansweredRequestExpiresAtItsDeadline(t *testing.T) {
	dir := testDir(t)
	asked := make(chan Request, 1)
	h := acquireT(t, Options{Dir: dir, Policy: PolicyAsk, HeartbeatInterval: time.Minute,
		OnRequest: func(r Request) { asked <- r }})
	ch := startHelper(t, "takeover", dir, envTimeout+"=3000")
	req := receive(t, asked, "OnRequest")
	if err := syscall.Kill(ch.pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer ch.kill()
	if p := h.Pending(); p == nil || p.ID != req.ID {
		t.Fatalf("Pending = %+v, want %s", p, req.ID)
	}
	limit := time.After(time.Until(req.ExpiresAt) + 10*time.Second)
	for resolved := false; !resolved; {
		select {
		case ev := <-h.Events():
			if resolved = ev.Kind == EventTakeoverResolved; resolved {
				if late := time.Since(req.ExpiresAt); late < 0 || late > 2*time.Second {
					t.Errorf("request resolved %s after its deadline, want within 2 s (heartbeat 1 min)", late)
				}
			}
		case <-limit:
			t.Fatal("the request was not resolved within 10 s of its deadline (heartbeat 1 min)")
		}
	}
	if p := h.Pending(); p != nil {
		t.Errorf("Pending after the deadline = %+v, want nil", p)
	}
	if err := h.Decide(req.ID, true); !errors.Is(err, ErrNoRequest) {
		t.Errorf("Decide after the deadline = %v, want ErrNoRequest", err)
	}
	if !h.Admitting() || h.Err() != nil {
		t.Errorf("owner after an unanswered request: admitting %t, err %v", h.Admitting(), h.Err())
	}
}
