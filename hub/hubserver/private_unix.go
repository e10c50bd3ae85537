//go:build !windows

package hubserver

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// private returns an error when fi (the store or its token file) is group- or world-accessible
// or owned by another user.
func private(fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o077 != 0 {
		return errors.New("open to group or others")
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return errors.New("owned by another user")
	}
	return nil
}
