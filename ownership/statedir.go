package ownership

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StateDir prepares the state directory dir (app/paths chooses it: --home, ROUTINELY_HOME or the
// per-OS default, docs/design.md#2-state-directory). It creates the directory 0700 when missing
// and returns its canonical path (symlinks resolved, so two aliases of one directory share one
// guard).
//
// Errors: ErrUnsafeDir (wrapped, naming the directory, the reason and what to do) when the
// directory is owned by another user (directly or as a symlink's target), grants its group or
// others any access (Unix mode bits 0077), is not a directory, or (Linux) is on NFS, SMB/CIFS or
// FUSE, where file locks are not shared between machines; an I/O error (wrapped) when it cannot
// be created or examined; ErrUnsafeDir when dir is empty.
func StateDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: no state directory given", ErrUnsafeDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("state directory %s: %w", dir, err)
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return "", fmt.Errorf("create state directory %s: %w", abs, err)
		}
		// MkdirAll applies the umask; a fresh directory must be exactly 0700.
		if err := os.Chmod(abs, 0o700); err != nil {
			return "", fmt.Errorf("create state directory %s: %w", abs, err)
		}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("state directory %s: %w", abs, err)
	}
	if err := checkDirSafe(real); err != nil {
		if real != abs {
			return "", fmt.Errorf("%s (reached through symlink %s): %w", real, abs, err)
		}
		return "", err
	}
	return real, nil
}

// checkDirSafe refuses a directory that another user could tamper with (checkDirAccess) or whose
// locks are not shared between machines (checkDirFilesystem). dir is canonical (no symlinks). It
// returns ErrUnsafeDir (wrapped, naming dir, the reason and what to do), or the stat error
// (wrapped).
func checkDirSafe(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("state directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory; pass --home with a directory", ErrUnsafeDir, dir)
	}
	if err := checkDirAccess(dir, fi); err != nil {
		return err
	}
	return checkDirFilesystem(dir)
}
