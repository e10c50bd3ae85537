//go:build unix

package ownership

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkDirOwner refuses a directory not owned by the effective uid: its owner could replace
// owner.lock and defeat the guard.
func checkDirOwner(dir string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d); use a directory you own (--home DIR)",
			ErrUnsafeDir, dir, st.Uid, uid)
	}
	return nil
}
