//go:build !windows

package config

import (
	"fmt"
	"io/fs"
	"os"
)

// tokenUnsafe says what makes the token file fi (its fstat) unsafe to use, or "": it must be
// owned by you or root (trustedOwner) and neither readable nor writable by group or others.
func tokenUnsafe(fi fs.FileInfo) string {
	if uid, ok := trustedOwner(fi); !ok {
		return fmt.Sprintf("is owned by %s, not you (%s): copy hub.token into a file of your own", userName(uid), userName(os.Geteuid()))
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return fmt.Sprintf("can be read or written by others (mode %04o): chmod 600 it", m)
	}
	return ""
}
