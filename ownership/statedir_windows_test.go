package ownership

import (
	"context"
	"path/filepath"
	"testing"
)

// Windows reports every writable directory as mode 0777 (fs.FileMode knows no ACLs): a fresh
// state directory must still be accepted and owned.
func TestStateDirAcceptsWindowsDirectory(t *testing.T) {
	dir, err := StateDir(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatalf("StateDir: %v", err)
	}
	h, err := Acquire(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := h.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
}
