package autostart

import (
	"path/filepath"
	"testing"
)

// The package-level functions use $XDG_CONFIG_HOME on Linux.
func TestXDGConfigHomeFromEnvironment(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", root)
	exe := fakeBinary(t, filepath.Join(root, "bin"), "routinely")
	st, err := Enable(exe)
	mustStatus(t, st, err, Enabled, true)
	if want := filepath.Join(root, "autostart", AppID+".desktop"); st.Location != want {
		t.Fatalf("location %q, want %q", st.Location, want)
	}
	// A relative XDG_CONFIG_HOME is invalid per the Base Directory spec and ignored.
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", "relative/dir")
	t.Setenv("HOME", home)
	if got, _ := xdgConfigHome(); got != filepath.Join(home, ".config") {
		t.Fatalf("xdgConfigHome = %q, want %q", got, filepath.Join(home, ".config"))
	}
	t.Setenv("XDG_CONFIG_HOME", root)
	// The zero Manager is the default one.
	st, err = Manager{}.Current(exe)
	mustStatus(t, st, err, Enabled, true)
	st, err = Disable()
	mustStatus(t, st, err, Disabled, false)
}
