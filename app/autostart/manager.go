package autostart

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BackgroundFlag is the argument every login item passes: start with no window shown.
const BackgroundFlag = "--background"

// HomeFlag is the argument that names the profile a login item starts (the CLI's --home): a
// Manager made with WithHome writes it after BackgroundFlag.
const HomeFlag = "--home"

// backend is one kind of login item (XDG entry, LaunchAgent, Run value).
type backend interface {
	// resolve turns the running binary's path into the target the entry should start.
	resolve(exe string) (string, error)
	// write installs the entry that starts target (absolute, resolved) with args, and removes
	// stale ones of ours.
	write(target string, args []string) error
	// remove deletes our entries; missing entries are not an error.
	remove() error
	// read reports the entry's state, target and Home, without PointsHere.
	read() (Status, error)
	// samePath says whether two resolved paths name the same executable.
	samePath(a, b string) bool
}

// Manager manages the login item of one kind in one place: an entry per the Desktop Application
// Autostart Specification (NewXDG), a LaunchAgent per launchd.plist(5) (NewLaunchAgent), or the
// HKCU Run value (NewRunKey, Windows). Default returns the one for this operating system, and the
// zero Manager is Default; NewXDG and NewLaunchAgent take an explicit directory (tests).
type Manager struct {
	b    backend
	home string // the profile the entry starts (--home), "" for the default profile
}

// WithHome returns m for the profile home: the entries it writes start the app with
// `--home home`, and its Status counts an entry as pointing here only if it starts that profile.
// home is the profile's directory as the app resolved it (absolute); "" is the default profile.
func (m Manager) WithHome(home string) Manager {
	m.home = home
	return m
}

// args are the arguments the entry passes to the binary.
func (m Manager) args() []string {
	if m.home == "" {
		return []string{BackgroundFlag}
	}
	return []string{BackgroundFlag, HomeFlag, m.home}
}

// backend returns m's backend, or the operating system's for the zero Manager.
func (m Manager) backend() backend {
	if m.b == nil {
		return Default().b
	}
	return m.b
}

// Enable installs or rewrites the login item so it starts exe with --background (and --home for
// a Manager made with WithHome), and removes stale entries of ours. It is idempotent. See the
// package rule on the user's choice.
func (m Manager) Enable(exe string) (Status, error) {
	b := m.backend()
	target, err := b.resolve(exe)
	if err != nil {
		return Status{}, err
	}
	if err := b.write(target, m.args()); err != nil {
		st, _ := m.status(target) // what is there now, e.g. Unsupported
		return st, err
	}
	return m.status(target)
}

// Disable removes the login item and any stale entries of ours (idempotent).
func (m Manager) Disable() (Status, error) {
	b := m.backend()
	if err := b.remove(); err != nil {
		st, _ := b.read()
		return st, err
	}
	return b.read()
}

// Current reports the login item's state and whether it starts exe on m's profile.
func (m Manager) Current(exe string) (Status, error) {
	target, err := m.backend().resolve(exe)
	if err != nil {
		// The running binary may have been deleted (an update in progress): still report the
		// entry, compared with the path as given.
		target = cleanAbs(exe)
	}
	return m.status(target)
}

// Refresh rewrites an Enabled item that starts another binary so it starts exe; any other state
// is returned unchanged. It never turns autostart on, and it never moves the item to m's
// profile: which profile starts at login is the person's choice (Enable).
func (m Manager) Refresh(exe string) (Status, error) {
	st, err := m.Current(exe)
	if err != nil || st.State != Enabled || st.PointsHere {
		return st, err
	}
	b := m.backend()
	if target, err := b.resolve(exe); err != nil || b.samePath(st.Target, target) {
		return st, err // this binary already (only the profile differs), or exe is unusable
	}
	// Follow the binary, keeping the profile the entry starts.
	if _, err := m.WithHome(st.Home).Enable(exe); err != nil {
		return st, err
	}
	return m.Current(exe)
}

// status reads the login item and sets PointsHere when it starts target (a resolved path) on
// m's profile. On a read error it returns what the backend could tell, with the error.
func (m Manager) status(target string) (Status, error) {
	b := m.backend()
	st, err := b.read()
	if err != nil {
		return st, err
	}
	st.PointsHere = st.Target != "" && b.samePath(st.Target, target) && st.Home == m.home
	return st, nil
}

// homeArg returns the profile that args pass with HomeFlag ("--home DIR" or "--home=DIR"), or
// "" when they pass none.
func homeArg(args []string) string {
	for i, a := range args {
		if a == HomeFlag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, HomeFlag+"="); ok {
			return v
		}
	}
	return ""
}

// resolveExe returns exe as an absolute path with every symlink resolved, so the entry keeps
// working when a symlink (e.g. ~/bin/routinely) is changed or removed. Errors wrap
// ErrExecutable: an empty path, a missing file, or one that is not a regular file.
func resolveExe(exe string) (string, error) {
	if exe == "" {
		return "", fmt.Errorf("%w: empty path", ErrExecutable)
	}
	abs, err := filepath.Abs(exe)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrExecutable, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrExecutable, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrExecutable, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file", ErrExecutable, real)
	}
	return real, nil
}

// cleanAbs returns p made absolute, or only cleaned when the working directory is unknown.
func cleanAbs(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}
