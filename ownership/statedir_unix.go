//go:build unix

package ownership

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkDirAccess refuses a directory not owned by the effective uid, or open in any way to its
// group or to others: with write access another user could replace owner.lock and defeat the
// guard; with read or search access they could read journal.db, which holds the routines'
// captured output (tokens, keys). The fix it names is exact: `chmod 700 DIR`.
func checkDirAccess(dir string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := os.Geteuid(); int(st.Uid) != uid {
			return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d); use a directory you own (--home DIR)",
				ErrUnsafeDir, dir, st.Uid, uid)
		}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s is open to other users (mode %04o), who could read the routines' output or replace its files; run `chmod 700 %s`",
			ErrUnsafeDir, dir, perm, dir)
	}
	return nil
}
