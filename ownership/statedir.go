package ownership

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// StateDir resolves and prepares the state directory: override (from --home or ROUTINELY_HOME)
// if non-empty, else the per-OS default of docs/design.md#2-state-directory (Linux $XDG_STATE_HOME/routinely or
// ~/.local/state/routinely, macOS ~/Library/Application Support/Routinely, Windows
// %LOCALAPPDATA%\Routinely). It creates the directory 0700 when missing and returns its canonical
// path (symlinks resolved, so two aliases of one directory share one guard).
//
// Errors: ErrUnsafeDir (wrapped, naming the directory, the reason and what to do) when the
// directory is owned by another user (directly or as a symlink's target), grants its group or
// others any access (Unix mode bits 0077), is not a directory, or (Linux) is on NFS, SMB/CIFS or
// FUSE, where file locks are not shared between machines; an I/O error (wrapped) when it cannot
// be created or examined.
func StateDir(override string) (string, error) {
	dir := override
	if dir == "" {
		d, err := defaultStateDir(os.Getenv, runtime.GOOS)
		if err != nil {
			return "", err
		}
		dir = d
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

// defaultStateDir returns the per-OS default state directory, reading the environment through
// getenv so tests can pass values in. It returns an error when no home directory is known.
func defaultStateDir(getenv func(string) string, goos string) (string, error) {
	home := getenv("HOME")
	switch goos {
	case "windows":
		if v := getenv("LOCALAPPDATA"); v != "" {
			return filepath.Join(v, "Routinely"), nil
		}
		if v := getenv("USERPROFILE"); v != "" {
			return filepath.Join(v, "AppData", "Local", "Routinely"), nil
		}
	case "darwin":
		if home != "" {
			return filepath.Join(home, "Library", "Application Support", "Routinely"), nil
		}
	default:
		// XDG Base Directory spec 0.8: $XDG_STATE_HOME must be absolute, else ~/.local/state.
		if v := getenv("XDG_STATE_HOME"); filepath.IsAbs(v) {
			return filepath.Join(v, "routinely"), nil
		}
		if home != "" {
			return filepath.Join(home, ".local", "state", "routinely"), nil
		}
	}
	return "", fmt.Errorf("%w: no home directory is known (set HOME, or pass --home DIR / ROUTINELY_HOME)", ErrUnsafeDir)
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
