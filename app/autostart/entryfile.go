package autostart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// entryFile is a login item kept as one file in a directory the session reads at login (an XDG
// autostart directory, ~/Library/LaunchAgents). The backends supply the file format; entryFile
// does the file work they share: install, uninstall, sweeping stale copies of ours, reading.
type entryFile struct {
	path string // our entry; stale copies are the other files with its extension in its directory
	kind string // what the directory holds, for errors ("entries", "agents")
	// isOurs reports whether the contents of another file in the directory are an entry of ours.
	isOurs func(data []byte) bool
}

// install writes data to the entry atomically (mode 0644: launchd ignores agents writable by
// others) unless it already holds exactly data, then removes stale entries of ours. Errors name
// the file or directory that could not be written, listed or removed.
func (f entryFile) install(data []byte) error {
	if err := writeIfChanged(f.path, data, 0o644); err != nil {
		return err
	}
	return f.removeStale()
}

// uninstall removes the entry (a missing one is success) and any stale entries of ours.
func (f entryFile) uninstall() error {
	if err := removeIfExists(f.path); err != nil {
		return err
	}
	return f.removeStale()
}

// removeStale deletes the other files in the entry's directory that isOurs recognises: left by an
// older file name or copied by hand, they would start a second instance at login (or, for
// launchd, make it refuse a second job with our label). Unreadable files are not ours to judge.
func (f entryFile) removeStale() error {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(f.path), "*"+filepath.Ext(f.path)))
	if err != nil {
		return fmt.Errorf("autostart: list %s: %w", f.kind, err)
	}
	for _, m := range matches {
		if m == f.path {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil || !f.isOurs(data) {
			continue
		}
		if err := removeIfExists(m); err != nil {
			return err
		}
	}
	return nil
}

// status reads the entry into a Status whose Location is the entry's path. No file is Disabled
// with no error. Otherwise decode returns the program the entry starts, its arguments (for
// Home) and whether the user turned it off inside the file: the state is then Enabled, or
// DisabledByUser. A read error wraps the *os.PathError, a decode error is wrapped with the
// path; either returns Disabled.
func (f entryFile) status(decode func(data []byte) (target string, args []string, userOff bool, err error)) (Status, error) {
	st := Status{State: Disabled, Location: f.path}
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: read %s: %w", f.path, err)
	}
	target, args, userOff, err := decode(data)
	if err != nil {
		return st, fmt.Errorf("autostart: %s: %w", f.path, err)
	}
	st.State, st.Target, st.Home = Enabled, target, homeArg(args)
	if userOff {
		st.State = DisabledByUser
	}
	return st, nil
}

// sameFilePath says whether a and b name the same executable: equal paths, or the same file on
// disk (an entry written by hand may name a symlink to the binary).
func sameFilePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}
