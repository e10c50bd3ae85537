package ownership

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// guard is the exclusive OS lock on owner.lock (flock(2) / LockFileEx). The file is created once
// and never read, written, truncated, renamed or deleted; only the lock on it matters, and the
// kernel drops that lock when the holder dies. The descriptor is close-on-exec, so children never
// inherit it.
type guard struct {
	path string
	fl   lockFile
	held fs.FileInfo // fstat of the locked descriptor at acquisition
	// lockedMono is when the lock was taken (CLOCK_MONOTONIC ns, monoNow): the instant this
	// process became the only one that can own, before the epoch and the record exist.
	lockedMono int64
}

// lockFile is the lock on one open file description of owner.lock, as gofrs/flock's Flock
// provides it (newLockFile): Lock waits for it, TryLock does not, Stat is the fstat of the
// locked descriptor, Unlock lets it go; the descriptor is open only while locked. On Linux the
// guard takes it on a descriptor it places itself (fdLock, guardlock_linux.go).
type lockFile interface {
	Lock() error
	TryLock() (bool, error)
	Stat() (fs.FileInfo, error)
	Unlock() error
}

// tryGuard makes one non-blocking attempt at the exclusive lock of dir/owner.lock, creating it
// (0600) when missing. The open never blocks (a named pipe there would wait for a writer forever)
// and never follows a symbolic link (which could point at another user's file): see
// atomicfile.NoFollow. It returns (guard, nil) on success, (nil, nil) when another open file
// description holds it, or an error: ErrUnsafeDir (wrapped, see notGuardFile) when owner.lock is
// not a regular file, else the I/O error (wrapped).
func tryGuard(dir string) (*guard, error) { return takeGuard(dir, false) }

// blockGuard is tryGuard that waits, in the kernel, while another open file description holds
// the lock (flock(2) without LOCK_NB; LockFileEx without LOCKFILE_FAIL_IMMEDIATELY), so the
// kernel wakes it the moment the holder unlocks or dies. It returns the guard, or the errors of
// tryGuard. It cannot be interrupted: see waitGuard for how a standby stays cancellable.
func blockGuard(dir string) (*guard, error) { return takeGuard(dir, true) }

// guardMoves bounds how often takeGuard opens owner.lock again because the file it locked was
// replaced meanwhile; more replacements than that in a row are an attack, reported as an error.
const guardMoves = 3

// takeGuard opens owner.lock and locks it, waiting for the lock when block is set. A lock taken
// on a file that is no longer dir/owner.lock (it was renamed or deleted and re-created between
// the open and the lock — a long time when blocking) guards nothing: another process could lock
// the new file and own too. So the locked file is checked against the path (intact), and on a
// mismatch unlocked and opened again. Returns as tryGuard.
func takeGuard(dir string, block bool) (*guard, error) {
	path := filepath.Join(dir, lockName)
	for range guardMoves {
		fl := newLockFile(path)
		ok, err := true, error(nil)
		if block {
			err = fl.Lock()
		} else {
			ok, err = fl.TryLock()
		}
		if err != nil {
			if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
				return nil, notGuardFile(path, fi)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !ok {
			return nil, nil
		}
		fi, err := fl.Stat() // fstat of the locked descriptor
		if err != nil {
			_ = fl.Unlock()
			return nil, fmt.Errorf("stat %s: %w", path, err)
		}
		if !fi.Mode().IsRegular() {
			_ = fl.Unlock()
			return nil, notGuardFile(path, fi)
		}
		g := &guard{path: path, fl: fl, held: fi, lockedMono: monoNow()}
		if g.intact() == nil {
			return g, nil
		}
		_ = fl.Unlock()
	}
	return nil, fmt.Errorf("%w: %s was replaced %d times while being locked", ErrGuardReplaced, path, guardMoves)
}

// notGuardFile is the refusal of an owner.lock that is not a regular file (a named pipe, a
// symbolic link, a directory). Routinely never replaces owner.lock by itself: two processes doing
// so at once could each lock a different file and both own. It returns ErrUnsafeDir (wrapped)
// naming the file, what it is and the command that fixes it.
func notGuardFile(path string, fi fs.FileInfo) error {
	return fmt.Errorf("%w: %s is not a regular file (mode %s), so it cannot be the guard; remove it (`rm %s`) while no Routinely process runs",
		ErrUnsafeDir, path, fi.Mode(), path)
}

// intact checks that owner.lock on disk is still the file whose lock we hold: same device and
// inode, and still linked. It returns ErrGuardReplaced (wrapped, with what was found) otherwise,
// including when the path cannot be examined at all.
func (g *guard) intact() error {
	onDisk, err := os.Lstat(g.path) // a symlink in its place is a different file too
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrGuardReplaced, g.path, err)
	}
	if !os.SameFile(g.held, onDisk) {
		return fmt.Errorf("%w: %s is a different file now", ErrGuardReplaced, g.path)
	}
	if fi, err := g.fl.Stat(); err == nil && linkCount(fi) == 0 {
		return fmt.Errorf("%w: %s was unlinked", ErrGuardReplaced, g.path)
	}
	return nil
}

// release unlocks the guard and closes its descriptor. It returns the unlock error (wrapped,
// naming the file); the descriptor then stays open, and locked, until the process exits.
func (g *guard) release() error {
	if err := g.fl.Unlock(); err != nil {
		return fmt.Errorf("unlock %s: %w", g.path, err)
	}
	return nil
}
