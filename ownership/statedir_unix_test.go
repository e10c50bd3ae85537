//go:build unix

package ownership

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests rely on Unix permission bits, uids and symlinks; statedir_windows_test.go covers
// Windows.

func TestStateDirCreates0700AndIsCanonical(t *testing.T) {
	base := t.TempDir()
	dir, err := StateDir(filepath.Join(base, "a", "state"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("created %v mode %v", err, fi.Mode())
	}
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(dir, alias); err != nil {
		t.Fatal(err)
	}
	got, err := StateDir(alias)
	if err != nil || got != dir {
		t.Fatalf("alias resolved to %q (%v), want %q", got, err, dir)
	}
	// Both aliases lock the same guard.
	h, err := Acquire(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(context.Background())
	if _, err := Acquire(context.Background(), Options{Dir: alias}); !errors.Is(err, ErrHeldInProcess) {
		t.Fatalf("acquire through an alias: %v", err)
	}
}

func TestStateDirRefusesUnsafe(t *testing.T) {
	base := t.TempDir()
	wide := filepath.Join(base, "wide")
	if err := os.Mkdir(wide, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(wide, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := StateDir(wide)
	if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), wide) || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("world-writable: %v", err)
	}
	// Readable or searchable by others is refused too: journal.db holds the routines' output.
	for _, mode := range []os.FileMode{0o755, 0o750, 0o701, 0o710} {
		if err := os.Chmod(wide, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := StateDir(wide); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "`chmod 700 "+wide+"`") {
			t.Errorf("mode %04o: %v, want ErrUnsafeDir with `chmod 700 %s`", mode, err, wide)
		}
	}
	if err := os.Chmod(wide, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := StateDir(wide); err != nil {
		t.Fatalf("mode 0700 refused: %v", err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := StateDir(file); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("regular file: %v", err)
	}

	// A directory owned by another uid, directly and as a symlink's target. As root the test
	// makes one; otherwise "/" (owned by root) is one.
	foreign := "/"
	if os.Getuid() == 0 {
		foreign = filepath.Join(base, "foreign")
		if err := os.Mkdir(foreign, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := StateDir(foreign); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "owned by uid") {
		t.Fatalf("foreign directory: %v", err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(foreign, link); err != nil {
		t.Fatal(err)
	}
	if _, err := StateDir(link); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("symlink to a foreign directory: %v", err)
	}
}
