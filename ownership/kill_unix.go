//go:build unix

package ownership

import "syscall"

// terminate asks pid to exit with SIGTERM. A suspended (SIGSTOPped) process is deliberately not
// continued: it stays stopped and the SIGKILL that follows the grace period ends it.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// kill ends pid with SIGKILL.
func kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
