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
}

// Resolve returns the paths of the profile selected by home (--home), else $ROUTINELY_HOME, else
// the per-OS defaults (docs/design.md#2-state-directory). It creates and checks the state directory through
// ownership.StateDir and returns its errors (ownership.ErrUnsafeDir, wrapped) unchanged. Owners
// and commands that write (daemon, run, pause, resume, the desktop app) use it.
func Resolve(home string) (Paths, error) {
	if home == "" {
		home = os.Getenv(EnvHome)
	}
	state, err := ownership.StateDir(home)
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
// ROUTINELY_HOME) everything lives in it; otherwise Linux keeps routines.toml under
// $XDG_CONFIG_HOME/routinely and macOS and Windows beside the state, as their apps do.
func build(state string, override bool) Paths {
	p := Paths{State: state, Journal: filepath.Join(state, "journal.db"), Logs: filepath.Join(state, "logs")}
	switch {
	case override:
		p.Config = filepath.Join(state, "routines.toml")
	case runtime.GOOS == "linux" || runtime.GOOS == "freebsd":
		p.Config = filepath.Join(xdg.ConfigHome, "routinely", "routines.toml")
	default:
		p.Config = filepath.Join(state, "routines.toml")
	}
	return p
}

// EnsureConfigDir creates the directory of p.Config (0700) so a first routines.toml can be written.
func (p Paths) EnsureConfigDir() error {
	if err := os.MkdirAll(filepath.Dir(p.Config), 0o700); err != nil {
		return fmt.Errorf("create config directory: %w", err)
	}
	return nil
}
