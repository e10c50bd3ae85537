package autostart

import (
	"errors"
	"fmt"

	"golang.org/x/sys/windows/registry"
)

// Registry paths under HKEY_CURRENT_USER.
const (
	runKeyPath      = `Software\Microsoft\Windows\CurrentVersion\Run`
	approvedKeyPath = `Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run`
)

// runKeyBackend is the Windows login item: the value "Routinely" under HKCU\...\Run.
type runKeyBackend struct {
	runPath, approvedPath string // under HKCU
}

// NewRunKey returns a Manager for the Run value under HKCU\runPath, reading the user's switch
// from HKCU\approvedPath (tests pass scratch keys).
func NewRunKey(runPath, approvedPath string) Manager {
	return Manager{b: runKeyBackend{runPath: runPath, approvedPath: approvedPath}}
}

// Default is the Run value under HKCU\Software\Microsoft\Windows\CurrentVersion\Run.
func Default() Manager { return NewRunKey(runKeyPath, approvedKeyPath) }

// location names our Run value for Status and errors: HKCU\<runPath>\Routinely.
func (r runKeyBackend) location() string { return `HKCU\` + r.runPath + `\` + RunValueName }

func (r runKeyBackend) resolve(exe string) (string, error) { return resolveExe(exe) }

func (r runKeyBackend) samePath(a, b string) bool { return samePathWindows(a, b) }

func (r runKeyBackend) write(target string, args []string) error {
	cmd, err := renderRunValue(target, args)
	if err != nil {
		return err
	}
	k, _, err := registry.CreateKey(registry.CURRENT_USER, r.runPath, registry.QUERY_VALUE|registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("autostart: open %s: %w", r.location(), err)
	}
	defer k.Close()
	if old, _, err := k.GetStringValue(RunValueName); err != nil || old != cmd {
		if err := k.SetStringValue(RunValueName, cmd); err != nil {
			return fmt.Errorf("autostart: set %s: %w", r.location(), err)
		}
	}
	return r.removeStale(k)
}

func (r runKeyBackend) remove() error {
	k, err := registry.OpenKey(registry.CURRENT_USER, r.runPath, registry.QUERY_VALUE|registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("autostart: open %s: %w", r.location(), err)
	}
	defer k.Close()
	if err := k.DeleteValue(RunValueName); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return fmt.Errorf("autostart: delete %s: %w", r.location(), err)
	}
	return r.removeStale(k)
}

// removeStale deletes other Run values that start a routinely.exe (see staleRunValues).
func (r runKeyBackend) removeStale(k registry.Key) error {
	names, err := k.ReadValueNames(0)
	if err != nil {
		return fmt.Errorf("autostart: list %s: %w", r.runPath, err)
	}
	values := map[string]string{}
	for _, n := range names {
		if v, _, err := k.GetStringValue(n); err == nil {
			values[n] = v
		}
	}
	for _, n := range staleRunValues(values) {
		if err := k.DeleteValue(n); err != nil && !errors.Is(err, registry.ErrNotExist) {
			return fmt.Errorf("autostart: delete stale value %q: %w", n, err)
		}
	}
	return nil
}

// read reports the Run value, and DisabledByUser when StartupApproved says the user switched it
// off in Task Manager or Settings; that switch is the user's and is never overwritten here.
func (r runKeyBackend) read() (Status, error) {
	st := Status{State: Disabled, Location: r.location()}
	k, err := registry.OpenKey(registry.CURRENT_USER, r.runPath, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: open %s: %w", r.location(), err)
	}
	defer k.Close()
	cmd, _, err := k.GetStringValue(RunValueName)
	if errors.Is(err, registry.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: read %s: %w", r.location(), err)
	}
	st.State, st.Target, st.Home = Enabled, parseRunValue(cmd), homeArg(parseRunArgs(cmd))
	a, err := registry.OpenKey(registry.CURRENT_USER, r.approvedPath, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: open HKCU\\%s: %w", r.approvedPath, err)
	}
	defer a.Close()
	b, _, err := a.GetBinaryValue(RunValueName)
	if err != nil && !errors.Is(err, registry.ErrNotExist) {
		return st, fmt.Errorf("autostart: read HKCU\\%s\\%s: %w", r.approvedPath, RunValueName, err)
	}
	if approvedDisabled(b) {
		st.State = DisabledByUser
	}
	return st, nil
}
