//go:build unix

package ownership

import (
	"errors"
	"syscall"
)

// pidExists sends signal 0 (kill(2)): success or EPERM (the process exists but belongs to
// another user) both mean the pid is in use.
func pidExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
