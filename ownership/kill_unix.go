//go:build unix

package ownership

import "syscall"

// terminate asks pid to exit: SIGTERM, then SIGCONT so a stopped process can act on it.
func terminate(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGCONT)
}

// kill ends pid with SIGKILL.
func kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
