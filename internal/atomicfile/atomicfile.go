// Package atomicfile replaces a small file so that readers see the old or the new content, never
// a mix, and a crash never leaves half a file (the app's settings and login items; the ownership
// files have their own writer in ownership/, tuned for the heartbeat). Read and OpenRegular open
// such a file back without blocking on a named pipe, following a symbolic link or reading more
// than a bound: every file in the state directory is read through them.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data and mode perm: a temp file in the same directory (created 0600
// by os.CreateTemp, then chmod perm), write, fsync, rename over path, then fsync the directory
// so the rename survives a power loss (rename(2): atomic within one filesystem). The directory
// must exist. A failed write leaves no temp file behind. Errors name path and wrap the failing
// step's error; a directory that cannot be synced is not an error (the file itself is synced).
func Write(path string, data []byte, perm os.FileMode) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
