//go:build unix

package ownership

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkDirAccess refuses a directory not owned by the effective uid, or writable by its group or
// by others: another user could then replace owner.lock and defeat the guard.
func checkDirAccess(dir string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := os.Geteuid(); int(st.Uid) != uid {
			return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d); use a directory you own (--home DIR)",
				ErrUnsafeDir, dir, st.Uid, uid)
		}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%w: %s is group- or world-writable (mode %04o), so another user could replace its files; run `chmod 700 %s`",
			ErrUnsafeDir, dir, perm, dir)
	}
	return nil
}
