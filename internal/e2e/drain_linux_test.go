//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair (pty(7)): the master, and the slave device the session
// under test uses as its terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("pty number: %v", e)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	return master, slave
}

// A daemon whose terminal goes away (the terminal window or ssh session closed: the kernel hangs
// the terminal up and sends SIGHUP to its controlling process) drains: the run in flight
// finishes with success, the daemon logs SIGHUP, releases and exits 0.
func TestTerminalClosedDrains(t *testing.T) {
	needHangups(t)
	marker := filepath.Join(t.TempDir(), "marker")
	home := newHome(t, slowRoutine(marker))
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(bin, "--home", home, "daemon")
	cmd.Env = testEnv()
	// The daemon leads a new session whose controlling terminal is the pty, as a login shell's
	// foreground job would have it; stderr stays with the test, to read the log. The daemon
	// writes nothing to its stdout, so nobody needs to read the terminal.
	cmd.Stdin, cmd.Stdout = slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	d := startCmd(t, cmd, "routinely daemon on a pty")
	slave.Close()
	waitOwner(t, home, d.pid())
	startSlowRun(t, home, marker)

	master.Close() // hang-up
	d.waitStderr("signal=SIGHUP", ownDeadline)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon after its terminal closed: exit %d, want 0 (drained)", code)
	}
	assertDrained(t, home, marker)
}
