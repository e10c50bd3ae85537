//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeOpener puts an xdg-open on PATH that runs script (sh).
func fakeOpener(t *testing.T, script string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte("#!/bin/sh\n"+script+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

// openPath reports what xdg-open says when no application handles the file, and that there is
// no xdg-open at all; a handler that starts is success.
func TestOpenPathReportsNoHandler(t *testing.T) {
	fakeOpener(t, `echo "xdg-open: no method available for opening '$1'" >&2; exit 3`)
	err := openPath(nil, "/home/ann/routines.toml")
	if err == nil || !strings.Contains(err.Error(), "no method available for opening") || !strings.Contains(err.Error(), "/home/ann/routines.toml") {
		t.Errorf("no handler: %v, want xdg-open's reason and the path", err)
	}

	fakeOpener(t, `exit 0`)
	if err := openPath(nil, "/home/ann/routines.toml"); err != nil {
		t.Errorf("a handler that starts: %v", err)
	}

	t.Setenv("PATH", t.TempDir())
	if err := openPath(nil, "/home/ann/routines.toml"); err == nil || !strings.Contains(err.Error(), "xdg-open is not installed") {
		t.Errorf("no xdg-open: %v, want it said", err)
	}
}
