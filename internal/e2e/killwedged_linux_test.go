//go:build linux

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalPending reports whether sig is pending for process pid (proc(5) /proc/PID/status
// ShdPnd): a SIGSTOPped process keeps a caught signal pending until it is continued.
func signalPending(pid int, sig syscall.Signal) bool {
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

// --kill-wedged ends the wedged owner, but a standby (`daemon --wait`) gets the guard first: the
// challenger says so, naming the new owner, and exits 75 (not "context deadline exceeded").
// To let the standby win for certain, the challenger is suspended once its SIGTERM is pending at
// the suspended owner, and the owner is continued: it acts on the SIGTERM, drains and releases,
// the standby owns, and only then does the challenger go on.
func TestKillWedgedStandbyWins(t *testing.T) {
	home := newHome(t, hourly)
	owner := start(t, home, "daemon", "--heartbeat", "200ms", "--on-takeover", "deny")
	s1 := waitOwner(t, home, owner.pid())
	standby := start(t, home, "daemon", "--wait")
	standby.waitStderr("Standing by", ownDeadline)

	owner.signal(syscall.SIGSTOP)
	challenger := start(t, home, "daemon", "--takeover", "--kill-wedged", "--timeout", "2s", "--wedge-threshold", "1s")
	deadline := time.Now().Add(ownDeadline)
	for !signalPending(owner.pid(), syscall.SIGTERM) {
		if time.Now().After(deadline) {
			t.Fatalf("no SIGTERM pending at the wedged owner after %s; challenger stderr:\n%s", ownDeadline, challenger.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	challenger.signal(syscall.SIGSTOP)
	owner.signal(syscall.SIGCONT)
	if code := owner.wait(cmdTimeout); code != 0 {
		t.Fatalf("the owner continued after SIGTERM: exit %d, want 0 (drained)", code)
	}
	s2 := waitOwner(t, home, standby.pid())
	if s2.Owner.Epoch != s1.Owner.Epoch+1 {
		t.Fatalf("standby owns with epoch %d, want %d", s2.Owner.Epoch, s1.Owner.Epoch+1)
	}
	challenger.signal(syscall.SIGCONT)

	if code := challenger.wait(cmdTimeout); code != 75 {
		t.Fatalf("challenger after the standby won: exit %d, want 75; stderr:\n%s", code, challenger.stderr.String())
	}
	stderr := challenger.stderr.String()
	for _, want := range []string{
		fmt.Sprintf("ended the wedged owner (pid %d, SIGTERM)", owner.pid()),
		fmt.Sprintf("pid %d", standby.pid()), fmt.Sprintf("epoch %d", s2.Owner.Epoch),
		"got the guard before this daemon did",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("challenger's message lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "deadline exceeded") {
		t.Errorf("challenger reports a bare deadline:\n%s", stderr)
	}
	if s3 := status(t, home); s3.Owner == nil || s3.Owner.PID != standby.pid() || s3.ExitCode != 0 {
		t.Fatalf("after the challenger gave up: %+v, want the standby owning, healthy", s3)
	}
}
