//go:build !windows

package scheduler

import (
	"fmt"
	"os"
	"syscall"
)

// insecureFile says why path must not supply commands ("" when it is fine): writable by group
// or others, or owned by another user.
func insecureFile(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if m := fi.Mode().Perm(); m&0o022 != 0 {
		return fmt.Sprintf("%s is group- or world-writable (mode %04o)", path, m)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Sprintf("%s is owned by uid %d, not you (uid %d)", path, st.Uid, os.Getuid())
	}
	return ""
}
