package autostart

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"howett.net/plist"
)

// launchAgentBackend is the macOS login item: ~/Library/LaunchAgents/io.routinely.app.plist.
type launchAgentBackend struct {
	dir string // "" = ~/Library/LaunchAgents
	// userDisabled asks launchd whether the user disabled the label (`launchctl disable`, System
	// Settings > Login Items); nil where there is no launchd (tests on Linux).
	userDisabled func(label string) (bool, error)
}

// NewLaunchAgent returns a Manager for the LaunchAgent in dir (empty: ~/Library/LaunchAgents).
// It works on any OS (files only); only the macOS default also asks launchctl about the user's
// switch.
func NewLaunchAgent(dir string) Manager { return Manager{b: launchAgentBackend{dir: dir}} }

// file returns the agent ~/Library/LaunchAgents/io.routinely.app.plist (or in l.dir); a stale
// copy is any other .plist there whose Label is ours. The error says there is no home directory.
func (l launchAgentBackend) file() (entryFile, error) {
	dir := l.dir
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return entryFile{}, fmt.Errorf("autostart: no home directory: %w", err)
		}
		dir = filepath.Join(home, "Library", "LaunchAgents")
	}
	return entryFile{path: filepath.Join(dir, AppID+".plist"), kind: "agents", isOurs: func(data []byte) bool {
		a, err := parseLaunchAgent(data)
		return err == nil && a.Label == AppID
	}}, nil
}

// resolve prefers the .app bundle's executable: started through a symlink or a helper inside
// the bundle, the agent should still start the app as Finder would.
func (l launchAgentBackend) resolve(exe string) (string, error) {
	real, err := resolveExe(exe)
	if err != nil {
		return "", err
	}
	if b, ok := bundleExecutable(real); ok {
		return b, nil
	}
	return real, nil
}

func (l launchAgentBackend) samePath(a, b string) bool { return sameFilePath(a, b) }

func (l launchAgentBackend) write(target string, args []string) error {
	f, err := l.file()
	if err != nil {
		return err
	}
	data, err := renderLaunchAgent(target, args)
	if err != nil {
		return err
	}
	return f.install(data)
}

func (l launchAgentBackend) remove() error {
	f, err := l.file()
	if err != nil {
		return err
	}
	return f.uninstall()
}

// read reports the agent: Program or ProgramArguments[0] as target, DisabledByUser for
// Disabled=true in the file or, when the file says Enabled, for the user's switch in launchd.
// A launchctl error is returned with the file's state.
func (l launchAgentBackend) read() (Status, error) {
	f, err := l.file()
	if err != nil {
		return Status{State: Disabled}, err
	}
	st, err := f.status(func(data []byte) (string, []string, bool, error) {
		a, err := parseLaunchAgent(data)
		return a.target(), a.args(), a.Disabled, err
	})
	if err != nil || st.State != Enabled || l.userDisabled == nil {
		return st, err
	}
	off, err := l.userDisabled(AppID)
	if err != nil {
		return st, err
	}
	if off {
		st.State = DisabledByUser
	}
	return st, nil
}

// bundleExecutable returns the main executable of the innermost .app bundle containing path
// (Contents/MacOS/<CFBundleExecutable> from Contents/Info.plist), if there is one.
func bundleExecutable(path string) (string, bool) {
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if !strings.EqualFold(filepath.Ext(dir), ".app") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "Contents", "Info.plist"))
		if err != nil {
			continue
		}
		var info struct {
			Executable string `plist:"CFBundleExecutable"`
		}
		if _, err := plist.Unmarshal(data, &info); err != nil || info.Executable == "" ||
			strings.ContainsRune(info.Executable, '/') {
			continue
		}
		exe := filepath.Join(dir, "Contents", "MacOS", info.Executable)
		if fi, err := os.Stat(exe); err == nil && fi.Mode().IsRegular() {
			return exe, true
		}
	}
	return "", false
}

// parsePrintDisabled reads `launchctl print-disabled gui/<uid>` output and reports whether label
// is listed as disabled. macOS 13+ prints `"label" => disabled`, older versions `=> true`.
func parsePrintDisabled(out []byte, label string) bool {
	for _, line := range bytes.Split(out, []byte("\n")) {
		k, v, ok := strings.Cut(strings.TrimSpace(string(line)), "=>")
		if !ok || strings.Trim(strings.TrimSpace(k), `"`) != label {
			continue
		}
		v = strings.TrimSpace(v)
		return v == "disabled" || v == "true"
	}
	return false
}
