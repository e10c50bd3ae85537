package paths

import (
	"os"
	"path/filepath"
	"testing"
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
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("Resolve: %v, %v; want a 0700 directory", fi, err)
	}
	p, exists, err = Lookup(home)
	if err != nil || !exists || p != r {
		t.Fatalf("Lookup(existing) = %+v, %v, %v; want %+v", p, exists, err, r)
	}
}

// ROUTINELY_HOME selects the profile when --home is empty, for Lookup as for Resolve.
func TestLookupHonoursEnv(t *testing.T) {
	home := filepath.Join(t.TempDir(), "env-profile")
	t.Setenv(EnvHome, home)
	p, exists, err := Lookup("")
	if err != nil || exists || p.State != home {
		t.Fatalf("Lookup(\"\") with %s=%s: %+v, %v, %v", EnvHome, home, p, exists, err)
	}
}

// An unsafe directory is refused by Lookup as by Resolve.
func TestLookupRefusesUnsafeDir(t *testing.T) {
	home := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o770); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Lookup(home); err == nil {
		t.Fatal("Lookup accepted a group-writable directory")
	}
}
