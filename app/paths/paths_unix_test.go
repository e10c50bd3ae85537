//go:build unix

package paths

import (
	"os"
	"path/filepath"
	"testing"
)

// privateDirPerm is how a directory Resolve created looks: 0700.
const privateDirPerm = 0o700

// Windows trusts the directory's ACL and checks no mode bits (ownership's statedir_windows.go):
// refusing a group-writable directory is Unix's.

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
