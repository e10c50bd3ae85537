//go:build unix

package ownership

import (
	"os"
	"path/filepath"
	"syscall"
)

// requestFileUID returns the owner uid of takeover.json (-1 when unknown): the file's owner, not
// the uid it claims inside, decides who wrote it.
func requestFileUID(dir string) int {
	fi, err := os.Stat(filepath.Join(dir, requestName))
	if err != nil {
		return -1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
