package ownership

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestDefaultStateDirPerOS(t *testing.T) {
	env := map[string]string{"HOME": "/home/ann", "XDG_STATE_HOME": "/xdg/state", "LOCALAPPDATA": `C:\Users\ann\AppData\Local`}
	get := func(k string) string { return env[k] }
	cases := map[string]string{
		"linux":   "/xdg/state/routinely",
		"freebsd": "/xdg/state/routinely",
		"darwin":  "/home/ann/Library/Application Support/Routinely",
		"windows": filepath.Join(`C:\Users\ann\AppData\Local`, "Routinely"),
	}
	for goos, want := range cases {
		if got, err := defaultStateDir(get, goos); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", goos, got, err, want)
		}
	}
	env["XDG_STATE_HOME"] = "relative/ignored" // XDG spec: relative paths are invalid
	if got, _ := defaultStateDir(get, "linux"); got != "/home/ann/.local/state/routinely" {
		t.Errorf("linux without a valid XDG_STATE_HOME: %q", got)
	}
	if _, err := defaultStateDir(func(string) string { return "" }, "linux"); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("no HOME: %v", err)
	}
}
