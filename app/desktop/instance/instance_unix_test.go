//go:build unix

package instance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An app that holds the lock but cannot answer (stopped) is reported as not answering within
// the patience given, and does not make the launch hang.
func TestStoppedAppIsNotAnswering(t *testing.T) {
	dir := stateDir(t)
	first := startLaunch(t, dir)
	first.expect(t, "primary")
	if err := first.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.cmd.Process.Signal(syscall.SIGCONT) }) // before its kill (LIFO)
	waitStopped(t, first.cmd.Process.Pid)
	start := time.Now()
	p, err := Claim(dir, true, time.Second)
	if !errors.Is(err, ErrNotAnswering) || p != nil {
		p.Close()
		t.Fatalf("Claim with the app stopped = %v, %v; want ErrNotAnswering", p, err)
	}
	if took := time.Since(start); took > time.Second+2*ioTimeout+time.Second {
		t.Fatalf("Claim took %s to give up", took)
	}
	_ = first.cmd.Process.Signal(syscall.SIGCONT)
	first.expect(t, "show") // the request queued while it was stopped is answered once it runs
}

// A named pipe in place of the lock file is refused at once (the open never blocks on it).
func TestLockFileThatIsAFIFO(t *testing.T) {
	dir := stateDir(t)
	if err := syscall.Mkfifo(filepath.Join(dir, LockName), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { p, err := Claim(dir, true, 0); p.Close(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrLockFile) || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Claim with a FIFO lock = %v, want a refusal naming it", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Claim blocked on a FIFO")
	}
}

// waitStopped returns once the kernel shows pid stopped: kill(2) only queues SIGSTOP, and a
// thread already running may still answer a moment. Where there is no /proc it waits 200 ms.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			return
		}
		// The state follows the command name in parentheses: "PID (COMM) STATE ...".
		if i := strings.LastIndexByte(string(data), ')'); i >= 0 && strings.HasPrefix(string(data[i+1:]), " T") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d not stopped 5 s after SIGSTOP: %s", pid, data)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
