// Package paths resolves where Routinely keeps its state, configuration, journal and logs.
package paths

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/adrg/xdg"

	"github.com/routinely/routinely/ownership"
)

// EnvHome is the environment variable that overrides every path (same as --home).
const EnvHome = "ROUTINELY_HOME"

// Paths are the files of one Routinely profile.
type Paths struct {
	State   string `json:"state"`   // state directory: owner.lock, owner.json, takeover files
	Config  string `json:"config"`  // routines.toml
	Journal string `json:"journal"` // journal.db (SQLite)
	Logs    string `json:"logs"`    // log directory (daemon log, routine logs of the examples)
	// Home is the state directory when the profile was chosen with --home or ROUTINELY_HOME,
	// "" for the per-OS default profile: what a login item must pass to start this profile.
	Home string `json:"-"`
}

// Resolve returns the paths of the profile selected by home (--home), else $ROUTINELY_HOME, else
// the per-OS defaults (defaultState; docs/design.md#2-state-directory). It creates and checks the
// state directory through ownership.StateDir and returns its errors (ownership.ErrUnsafeDir,
// wrapped) unchanged; ErrUnsafeDir too when no home directory is known for the defaults. Owners
// and commands that write (daemon, run, pause, resume, the desktop app) use it.
func Resolve(home string) (Paths, error) {
	if home == "" {
		home = os.Getenv(EnvHome)
	}
	dir := home
	if dir == "" {
		d, err := defaultState()
		if err != nil {
			return Paths{}, err
		}
		dir = d
	}
	state, err := ownership.StateDir(dir)
	if err != nil {
		return Paths{}, err
	}
	return build(state, home != ""), nil
}

// Lookup is Resolve for observers (status, routines, history, preview, validate, paths): it never
// creates anything. When home (or $ROUTINELY_HOME) names a directory that does not exist, it
// returns the paths that directory would hold, made absolute, and exists false — a mistyped
// --home is reported, not created. Otherwise it behaves as Resolve (the per-OS default directory
// is created there, empty, 0700) and exists is true. Errors are those of Resolve, plus
// filepath.Abs's (wrapped).
func Lookup(home string) (p Paths, exists bool, err error) {
	if home == "" {
		home = os.Getenv(EnvHome)
	}
	if home != "" {
		abs, err := filepath.Abs(home)
		if err != nil {
			return Paths{}, false, fmt.Errorf("state directory %s: %w", home, err)
		}
		if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
			return build(abs, true), false, nil
		}
	}
	p, err = Resolve(home)
	return p, err == nil, err
}

// build lays out a profile's files around its state directory. With an override (--home or
// ROUTINELY_HOME) everything lives in it; otherwise configBesideState decides where routines.toml
// is.
func build(state string, override bool) Paths {
	p := Paths{State: state, Journal: filepath.Join(state, "journal.db"), Logs: filepath.Join(state, "logs")}
	if override {
		p.Home = state
	}
	if override || configBesideState() {
		p.Config = filepath.Join(state, "routines.toml")
	} else {
		p.Config = filepath.Join(xdg.ConfigHome, "routinely", "routines.toml")
	}
	return p
}

// The per-OS defaults, all here: the state directory is the XDG state home's "routinely"
// (Linux and the BSDs: $XDG_STATE_HOME, else ~/.local/state), macOS's Application Support
// "Routinely" and Windows' %LOCALAPPDATA%\Routinely — adrg/xdg's StateHome on each. routines.toml
// is in the XDG config home on Linux and the BSDs, and beside the state on macOS and Windows, as
// their apps keep settings. adrg/xdg reads the environment when the program starts (xdg.Reload
// reads it again).

// configBesideState reports whether the default routines.toml lives in the state directory.
func configBesideState() bool { return runtime.GOOS == "darwin" || runtime.GOOS == "windows" }

// defaultState returns the default state directory. Errors: ownership.ErrUnsafeDir (wrapped)
// when no home directory is known, so no absolute default exists.
func defaultState() (string, error) {
	name := "routinely"
	if configBesideState() {
		name = "Routinely"
	}
	dir := filepath.Join(xdg.StateHome, name)
	// Without a home directory adrg/xdg falls back to a path under "/", which is nobody's.
	_, noHome := os.UserHomeDir()
	if noHome != nil && !filepath.IsAbs(os.Getenv("XDG_STATE_HOME")) || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%w: no home directory is known (set HOME, or pass --home DIR / ROUTINELY_HOME)", ownership.ErrUnsafeDir)
	}
	return dir, nil
}

// EnsureConfigDir creates the directory of p.Config (0700) so a first routines.toml can be written.
func (p Paths) EnsureConfigDir() error {
	if err := os.MkdirAll(filepath.Dir(p.Config), 0o700); err != nil {
		return fmt.Errorf("create config directory: %w", err)
	}
	return nil
}
