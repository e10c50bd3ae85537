//go:build unix

package ownership

import (
	"io/fs"
	"syscall"
)

// linkCount returns the number of hard links of fi (1 when unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
