//go:build unix || windows

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routinely/routinely/ownership"
)

// The ask-owner helper is this test binary re-executed (see TestMain): a real owner whose
// policy asks its user, as the desktop app's does, with nobody to click unless told to.
const (
	helperEnv      = "ROUTINELY_E2E_HELPER"       // "ask-owner" runs the helper instead of the tests
	helperDirEnv   = "ROUTINELY_E2E_HELPER_DIR"   // the profile directory it owns
	helperApproveE = "ROUTINELY_E2E_HELPER_AFTER" // approve each request after this long; unset: never decide
)

// askOwnerMain owns dir with role desktop and PolicyAsk, prints "owning epoch N" and "asked ID"
// on stdout, approves requests after $ROUTINELY_E2E_HELPER_AFTER if set, and returns its exit
// code when it has handed over (0) or on SIGTERM/SIGINT (0, after releasing).
func askOwnerMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var after time.Duration
	if v := os.Getenv(helperApproveE); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ask-owner:", err)
			return 2
		}
		after = d
	}
	dir, err := ownership.StateDir(os.Getenv(helperDirEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ask-owner:", err)
		return 1
	}
	asks := make(chan ownership.Request, 8)
	h, err := ownership.Acquire(ctx, ownership.Options{
		Dir: dir, Role: ownership.RoleDesktop, Version: "e2e-ask-owner", Policy: ownership.PolicyAsk,
		HeartbeatInterval: 200 * time.Millisecond,
		OnRequest: func(r ownership.Request) {
			select {
			case asks <- r:
			default:
			}
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ask-owner:", err)
		return 1
	}
	fmt.Printf("owning epoch %d\n", h.Epoch())
	for {
		select {
		case r := <-asks:
			fmt.Printf("asked %s\n", r.ID)
			if after > 0 {
				go func() {
					time.Sleep(after)
					if err := h.Decide(r.ID, true); err != nil {
						fmt.Fprintln(os.Stderr, "ask-owner: decide:", err)
					}
				}()
			}
		case <-h.Lost():
			fmt.Println("handed over")
			return 0
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := h.Release(rctx); err != nil {
				fmt.Fprintln(os.Stderr, "ask-owner: release:", err)
				return 1
			}
			return 0
		}
	}
}

// startAskOwner starts the helper on home and waits until it owns; approveAfter 0 means it never
// decides. It is SIGKILLed at test end if still running.
func startAskOwner(t *testing.T, home string, approveAfter time.Duration) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(testEnv(), helperEnv+"=ask-owner", helperDirEnv+"="+home)
	if approveAfter > 0 {
		cmd.Env = append(cmd.Env, helperApproveE+"="+approveAfter.String())
	}
	p := startCmd(t, cmd, "ask-owner helper")
	waitOwner(t, home, p.pid())
	return p
}

const waitingLine = "waiting for approval in the Routinely app…"

// An owner whose policy asks (the desktop app) and nobody answers: the challenger shows that it
// waits for approval in the app, then gives up after --timeout with exit 75 naming the owner,
// which keeps owning.
func TestTakeoverWaitsForApprovalThenTimesOut(t *testing.T) {
	home := newHome(t, hourly)
	owner := startAskOwner(t, home, 0)
	s1 := status(t, home)

	challenger := start(t, home, "daemon", "--takeover", "--timeout", "6s")
	challenger.waitStderr(waitingLine, ownDeadline)
	owner.waitStdout("asked ", ownDeadline)
	if code := challenger.wait(cmdTimeout); code != 75 {
		t.Fatalf("challenger exited %d, want 75; stderr:\n%s", code, challenger.stderr.String())
	}
	stderr := challenger.stderr.String()
	t.Logf("challenger stderr:\n%s", stderr)
	for _, want := range []string{"timed out", "Routinely desktop app", "approve in its tray menu", fmt.Sprintf("pid %d", owner.pid()), fmt.Sprintf("epoch %d", s1.Owner.Epoch)} {
		if !strings.Contains(stderr, want) {
			t.Errorf("challenger's message lacks %q:\n%s", want, stderr)
		}
	}
	if i, j := strings.Index(stderr, waitingLine), strings.Index(stderr, "timed out"); i < 0 || j < i {
		t.Errorf("the waiting line should come before the time-out message:\n%s", stderr)
	}
	// The progress line is printed once (no terminal): no repeated lines every second.
	if n := strings.Count(stderr, waitingLine); n != 1 {
		t.Errorf("waiting line printed %d times, want 1:\n%s", n, stderr)
	}
	if !owner.running() {
		t.Fatal("the asking owner exited after a takeover nobody approved")
	}
	// The request was withdrawn: nothing is left for a person to delete.
	if _, err := os.Stat(filepath.Join(home, "takeover.json")); err == nil {
		t.Error("takeover.json left behind after the challenger gave up")
	}
	if s2 := status(t, home); s2.Owner == nil || s2.Owner.PID != owner.pid() || s2.Owner.Epoch != s1.Owner.Epoch || s2.Owner.Role != "desktop" {
		t.Fatalf("owner changed after a takeover nobody approved: %+v", s2.Owner)
	}
}

// The same owner approving after a delay: the challenger shows the waiting line, then owns with
// epoch + 1, and the old owner has handed over.
func TestTakeoverWaitsForApprovalThenOwns(t *testing.T) {
	home := newHome(t, hourly)
	owner := startAskOwner(t, home, 1500*time.Millisecond)
	s1 := status(t, home)

	challenger := start(t, home, "daemon", "--takeover", "--timeout", "40s")
	challenger.waitStderr(waitingLine, ownDeadline)
	if code := owner.wait(ownDeadline + 5*time.Second); code != 0 {
		t.Fatalf("approving owner exited %d, want 0", code)
	}
	s2 := waitOwner(t, home, challenger.pid())
	if s2.Owner.Epoch != s1.Owner.Epoch+1 || s2.Owner.Role != "daemon" {
		t.Fatalf("after approval: %+v, want the daemon with epoch %d", s2.Owner, s1.Owner.Epoch+1)
	}
	challenger.waitStderr("Took over", ownDeadline)
	if !strings.Contains(owner.stdout.String(), "handed over\n") {
		t.Errorf("owner did not hand over:\n%s", owner.stdout.String())
	}
	challenger.stopWith(syscall.SIGTERM)
}
