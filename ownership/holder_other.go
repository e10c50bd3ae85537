//go:build !linux

package ownership

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/routinely/routinely/internal/atomicfile"
)

// guardHolder reports whether dir/owner.lock is locked. Without /proc/locks the only way to ask
// the kernel is a brief TryLock+Unlock on our own descriptor: if it succeeds nobody held the
// guard at that instant (and a concurrent contender may see it busy for microseconds, then
// retries on its next poll). The holder pid is unknown (0) on these systems.
func guardHolder(dir string) (held bool, pid int, err error) {
	path := filepath.Join(dir, lockName)
	// Nobody can own through anything but a regular file (see tryGuard).
	if fi, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return false, 0, nil
	}
	// O_RDONLY without O_CREATE: an observer never creates the guard. NoFollow: a named pipe
	// swapped in after the look above must not block the open.
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY|atomicfile.NoFollow))
	ok, err := fl.TryLock()
	if err != nil {
		return false, 0, fmt.Errorf("probe %s: %w", path, err)
	}
	if ok {
		_ = fl.Unlock()
		return false, 0, nil
	}
	return true, 0, nil
}
