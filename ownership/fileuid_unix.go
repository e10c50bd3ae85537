//go:build unix

package ownership

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the uid owning the file described by fi (-1 when unknown).
func fileOwner(fi fs.FileInfo) int {
	if fi != nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return int(st.Uid)
		}
	}
	return -1
}
