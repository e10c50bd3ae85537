// Package paths resolves where Routinely keeps its state, configuration, journal and logs.
package paths

import (
	"fmt"
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
// the per-OS defaults (DESIGN.md §2). It creates and checks the state directory through
// ownership.StateDir and returns its errors (ownership.ErrUnsafeDir, wrapped) unchanged.
func Resolve(home string) (Paths, error) {
	if home == "" {
		home = os.Getenv(EnvHome)
	}
	state, err := ownership.StateDir(home)
	if err != nil {
		return Paths{}, err
	}
	p := Paths{State: state, Journal: filepath.Join(state, "journal.db"), Logs: filepath.Join(state, "logs")}
	switch {
	case home != "":
		p.Config = filepath.Join(state, "routines.toml")
	case runtime.GOOS == "linux" || runtime.GOOS == "freebsd":
		p.Config = filepath.Join(xdg.ConfigHome, "routinely", "routines.toml")
	default: // macOS and Windows keep config beside the state, as their apps do
		p.Config = filepath.Join(state, "routines.toml")
	}
	return p, nil
}

// EnsureConfigDir creates the directory of p.Config (0700) so a first routines.toml can be written.
func (p Paths) EnsureConfigDir() error {
	if err := os.MkdirAll(filepath.Dir(p.Config), 0o700); err != nil {
		return fmt.Errorf("create config directory: %w", err)
	}
	return nil
}
