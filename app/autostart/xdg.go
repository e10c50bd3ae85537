package autostart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// xdgBackend is the Linux login item: $XDG_CONFIG_HOME/autostart/io.routinely.app.desktop
// (Desktop Application Autostart Specification, "Autostart Directories").
type xdgBackend struct {
	configHome string // "" = resolve $XDG_CONFIG_HOME at each call
}

// NewXDG returns a Manager for the XDG autostart entry under configHome/autostart. An empty
// configHome means $XDG_CONFIG_HOME, else $HOME/.config (XDG Base Directory Specification),
// read at each call.
func NewXDG(configHome string) Manager { return Manager{b: xdgBackend{configHome: configHome}} }

// xdgConfigHome follows the XDG Base Directory Specification: $XDG_CONFIG_HOME if set and
// absolute (a relative value is invalid and ignored), else $HOME/.config.
func xdgConfigHome() (string, error) {
	if v := os.Getenv("XDG_CONFIG_HOME"); v != "" && filepath.IsAbs(v) {
		return v, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("autostart: no config directory: %w", err)
	}
	return filepath.Join(home, ".config"), nil
}

func (x xdgBackend) dir() (string, error) {
	home := x.configHome
	if home == "" {
		var err error
		if home, err = xdgConfigHome(); err != nil {
			return "", err
		}
	}
	return filepath.Join(home, "autostart"), nil
}

func (x xdgBackend) path() (string, error) {
	dir, err := x.dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, AppID+".desktop"), nil
}

func (x xdgBackend) resolve(exe string) (string, error) { return resolveExe(exe) }

func (x xdgBackend) samePath(a, b string) bool { return sameFilePath(a, b) }

func (x xdgBackend) write(target string) error {
	p, err := x.path()
	if err != nil {
		return err
	}
	text, err := renderDesktopEntry(target)
	if err != nil {
		return err
	}
	if err := writeIfChanged(p, []byte(text), 0o644); err != nil {
		return err
	}
	return x.removeStale(p)
}

func (x xdgBackend) remove() error {
	p, err := x.path()
	if err != nil {
		return err
	}
	if err := removeIfExists(p); err != nil {
		return err
	}
	return x.removeStale(p)
}

// removeStale deletes other entries in the autostart directory that carry our marker key: left
// by an older file name or copied by hand, they would start a second instance at login.
func (x xdgBackend) removeStale(keep string) error {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(keep), "*.desktop"))
	if err != nil {
		return fmt.Errorf("autostart: list entries: %w", err)
	}
	for _, m := range matches {
		if m == keep {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil {
			continue // not ours to worry about
		}
		e, err := parseDesktopEntry(string(data))
		if err != nil || e[entryKeyMarker] != AppID {
			continue
		}
		if err := removeIfExists(m); err != nil {
			return err
		}
	}
	return nil
}

func (x xdgBackend) read() (Status, error) {
	p, err := x.path()
	if err != nil {
		return Status{State: Disabled}, err
	}
	st := Status{State: Disabled, Location: p}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: read %s: %w", p, err)
	}
	e, err := parseDesktopEntry(string(data))
	if err != nil {
		return st, fmt.Errorf("autostart: %s: %w", p, err)
	}
	if st.Target, err = e.target(); err != nil {
		return st, fmt.Errorf("autostart: %s: %w", p, err)
	}
	st.State = Enabled
	if e.hiddenByUser() {
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
