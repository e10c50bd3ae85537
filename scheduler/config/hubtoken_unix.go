//go:build !windows

package config

import (
	"io/fs"
	"syscall"
)

// openNonBlock keeps opening a FIFO put in place of a token file from blocking.
const openNonBlock = syscall.O_NONBLOCK

// tokenShared reports whether group or others may read the token file fi.
func tokenShared(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o077 != 0 }
