//go:build !linux

package ownership

import (
	"os"

	"github.com/gofrs/flock"

	"github.com/routinely/routinely/internal/atomicfile"
)

// newLockFile returns the unlocked lock of the guard file path: gofrs/flock, opening path
// created 0600 when missing, never through a symbolic link and never blocking on a named pipe
// (atomicfile.NoFollow). (Linux places the descriptor itself: guardlock_linux.go.)
func newLockFile(path string) lockFile {
	return flock.New(path, flock.SetPermissions(0o600), flock.SetFlag(os.O_CREATE|os.O_RDONLY|atomicfile.NoFollow))
}

// prepareGuardFD does nothing where the guard's descriptor is not placed (guardlock_linux.go).
func prepareGuardFD() {}
