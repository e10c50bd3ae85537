package autostart

import (
	"fmt"
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

// file returns the entry configHome/autostart/io.routinely.app.desktop (configHome "" means
// xdgConfigHome, whose error it returns); a stale copy is any other .desktop file there carrying
// our marker key.
func (x xdgBackend) file() (entryFile, error) {
	home := x.configHome
	if home == "" {
		var err error
		if home, err = xdgConfigHome(); err != nil {
			return entryFile{}, err
		}
	}
	return entryFile{path: filepath.Join(home, "autostart", AppID+".desktop"), kind: "entries", isOurs: func(data []byte) bool {
		e, err := parseDesktopEntry(string(data))
		return err == nil && e[entryKeyMarker] == AppID
	}}, nil
}

func (x xdgBackend) resolve(exe string) (string, error) { return resolveExe(exe) }

func (x xdgBackend) samePath(a, b string) bool { return sameFilePath(a, b) }

func (x xdgBackend) write(target string, args []string) error {
	f, err := x.file()
	if err != nil {
		return err
	}
	text, err := renderDesktopEntry(target, args)
	if err != nil {
		return err
	}
	return f.install([]byte(text))
}

func (x xdgBackend) remove() error {
	f, err := x.file()
	if err != nil {
		return err
	}
	return f.uninstall()
}

// read reports the entry: the first Exec argument as target, DisabledByUser for Hidden=true or
// X-GNOME-Autostart-enabled=false.
func (x xdgBackend) read() (Status, error) {
	f, err := x.file()
	if err != nil {
		return Status{State: Disabled}, err
	}
	return f.status(func(data []byte) (string, []string, bool, error) {
		e, err := parseDesktopEntry(string(data))
		if err != nil {
			return "", nil, false, err
		}
		target, args, err := e.target()
		return target, args, e.hiddenByUser(), err
	})
}
