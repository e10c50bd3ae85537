package autostart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"howett.net/plist"
)

// agentPlist is the LaunchAgent we write; keys and meanings from launchd.plist(5). There is no
// KeepAlive: a Quit from the tray must stay quit until the next login.
type agentPlist struct {
	Label                  string   `plist:"Label"`
	ProgramArguments       []string `plist:"ProgramArguments"`
	RunAtLoad              bool     `plist:"RunAtLoad"`
	LimitLoadToSessionType string   `plist:"LimitLoadToSessionType"` // Aqua: only in a GUI login
	ProcessType            string   `plist:"ProcessType"`            // Interactive: app-like limits
}

// agentOnDisk is what we read back from any LaunchAgent file, ours or edited by hand.
type agentOnDisk struct {
	Label            string   `plist:"Label"`
	Program          string   `plist:"Program"`
	ProgramArguments []string `plist:"ProgramArguments"`
	// Disabled (launchd.plist(5): "tells launchctl that it should not submit this job") is how
	// a user or a cleanup tool turns the agent off inside the file.
	Disabled bool `plist:"Disabled"`
}

// renderLaunchAgent returns the XML plist (launchd.plist(5)) that starts target with
// --background at login. The encoder does the XML escaping of &, <, > and quotes.
func renderLaunchAgent(target string) ([]byte, error) {
	if strings.ContainsRune(target, 0) {
		return nil, fmt.Errorf("%w: NUL byte in %q", ErrUnrepresentable, target)
	}
	out, err := plist.MarshalIndent(agentPlist{
		Label:                  AppID,
		ProgramArguments:       []string{target, BackgroundFlag},
		RunAtLoad:              true,
		LimitLoadToSessionType: "Aqua",
		ProcessType:            "Interactive",
	}, plist.XMLFormat, "\t")
	if err != nil {
		return nil, fmt.Errorf("autostart: encode LaunchAgent: %w", err)
	}
	return out, nil
}

// parseLaunchAgent decodes a LaunchAgent plist in any format launchd accepts.
func parseLaunchAgent(data []byte) (agentOnDisk, error) {
	var a agentOnDisk
	if _, err := plist.Unmarshal(data, &a); err != nil {
		return a, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return a, nil
}

// target is the program launchd starts: Program if set, else ProgramArguments[0]
// (launchd.plist(5), "Program" and "ProgramArguments").
func (a agentOnDisk) target() string {
	if a.Program != "" {
		return a.Program
	}
	if len(a.ProgramArguments) > 0 {
		return a.ProgramArguments[0]
	}
	return ""
}

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

func (l launchAgentBackend) path() (string, error) {
	dir := l.dir
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("autostart: no home directory: %w", err)
		}
		dir = filepath.Join(home, "Library", "LaunchAgents")
	}
	return filepath.Join(dir, AppID+".plist"), nil
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

func (l launchAgentBackend) write(target string) error {
	p, err := l.path()
	if err != nil {
		return err
	}
	data, err := renderLaunchAgent(target)
	if err != nil {
		return err
	}
	// launchd ignores agents writable by others; 0644 is what launchctl expects.
	if err := writeIfChanged(p, data, 0o644); err != nil {
		return err
	}
	return l.removeStale(p)
}

func (l launchAgentBackend) remove() error {
	p, err := l.path()
	if err != nil {
		return err
	}
	if err := removeIfExists(p); err != nil {
		return err
	}
	return l.removeStale(p)
}

// removeStale deletes other plists whose Label is ours: launchd refuses a second job with the
// same label, and the old one may start a moved binary.
func (l launchAgentBackend) removeStale(keep string) error {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(keep), "*.plist"))
	if err != nil {
		return fmt.Errorf("autostart: list agents: %w", err)
	}
	for _, m := range matches {
		if m == keep {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		if a, err := parseLaunchAgent(data); err != nil || a.Label != AppID {
			continue
		}
		if err := removeIfExists(m); err != nil {
			return err
		}
	}
	return nil
}

func (l launchAgentBackend) read() (Status, error) {
	p, err := l.path()
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
	a, err := parseLaunchAgent(data)
	if err != nil {
		return st, fmt.Errorf("autostart: %s: %w", p, err)
	}
	st.State, st.Target = Enabled, a.target()
	if a.Disabled {
		st.State = DisabledByUser
	}
	if l.userDisabled != nil && st.State == Enabled {
		off, err := l.userDisabled(AppID)
		if err != nil {
			return st, err
		}
		if off {
			st.State = DisabledByUser
		}
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
