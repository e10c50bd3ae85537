package paths

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adrg/xdg"

	"github.com/routinely/routinely/ownership"
)

// Lookup never creates the directory --home names; once it exists it agrees with Resolve.
func TestLookupCreatesNothing(t *testing.T) {
	home := filepath.Join(t.TempDir(), "profile")
	p, exists, err := Lookup(home)
	if err != nil || exists {
		t.Fatalf("Lookup(missing) = %+v, %v, %v; want exists false, no error", p, exists, err)
	}
	if p.State != home || p.Config != filepath.Join(home, "routines.toml") || p.Journal != filepath.Join(home, "journal.db") {
		t.Fatalf("Lookup(missing) paths = %+v", p)
	}
	if _, err := os.Lstat(home); !os.IsNotExist(err) {
		t.Fatalf("Lookup created %s (%v)", home, err)
	}

	r, err := Resolve(home)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != privateDirPerm {
		t.Fatalf("Resolve: %v, %v; want a %#o directory", fi, err, privateDirPerm)
	}
	p, exists, err = Lookup(home)
	if err != nil || !exists || p != r {
		t.Fatalf("Lookup(existing) = %+v, %v, %v; want %+v", p, exists, err, r)
	}
	if r.Home != r.State {
		t.Fatalf("Resolve(--home).Home = %q, want the profile's state directory %q", r.Home, r.State)
	}
}

// ROUTINELY_HOME selects the profile when --home is empty, for Lookup as for Resolve.
func TestLookupHonoursEnv(t *testing.T) {
	home := filepath.Join(t.TempDir(), "env-profile")
	t.Setenv(EnvHome, home)
	p, exists, err := Lookup("")
	if err != nil || exists || p.State != home || p.Home != home {
		t.Fatalf("Lookup(\"\") with %s=%s: %+v, %v, %v", EnvHome, home, p, exists, err)
	}
}

// The per-OS default comes from adrg/xdg's state home: $XDG_STATE_HOME/routinely when it is
// absolute (the XDG spec ignores a relative one), else ~/.local/state/routinely; with no home at
// all there is no default and the refusal says what to pass. Resolve("") then uses it.
func TestDefaultStateFollowsXDG(t *testing.T) {
	if configBesideState() {
		t.Skip("macOS and Windows: the default is the system's application-data folder (adrg/xdg)")
	}
	t.Cleanup(xdg.Reload)
	home := t.TempDir()
	t.Setenv(EnvHome, "")
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "xdg-state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg-config"))
	xdg.Reload()
	if got, err := defaultState(); err != nil || got != filepath.Join(home, "xdg-state", "routinely") {
		t.Fatalf("defaultState() = %q, %v; want $XDG_STATE_HOME/routinely", got, err)
	}
	p, err := Resolve("")
	if err != nil || p.State != filepath.Join(home, "xdg-state", "routinely") ||
		p.Config != filepath.Join(home, "xdg-config", "routinely", "routines.toml") {
		t.Fatalf("Resolve(\"\") = %+v, %v; want the XDG state and config homes", p, err)
	}
	if p.Home != "" {
		t.Fatalf("Resolve(\"\").Home = %q, want \"\" for the default profile", p.Home)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	xdg.Reload()
	if got, _ := defaultState(); got != filepath.Join(home, ".local", "state", "routinely") {
		t.Errorf("with a relative XDG_STATE_HOME: %q, want ~/.local/state/routinely", got)
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	xdg.Reload()
	if got, err := defaultState(); !errors.Is(err, ownership.ErrUnsafeDir) || !strings.Contains(err.Error(), "--home") {
		t.Errorf("with no home: %q, %v; want ErrUnsafeDir saying to pass --home", got, err)
	}
}
