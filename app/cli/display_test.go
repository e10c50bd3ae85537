//go:build linux

// The display check guards the desktop app's start on Linux only (desktop.go): X11 sockets are
// no concern of macOS's or Windows' desktop.

package cli

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routinely/routinely/app/paths"
)

// useSocketDir points the display check at dir for one test.
func useSocketDir(t *testing.T, dir string) {
	t.Helper()
	old := x11SocketDir
	x11SocketDir = dir
	t.Cleanup(func() { x11SocketDir = old })
}

func TestDisplayReachable(t *testing.T) {
	dir := t.TempDir()
	useSocketDir(t, dir)
	if displayReachable(":5") || displayReachable("unix:5.0") {
		t.Fatal("display :5 reported reachable with no X socket")
	}
	l, err := net.Listen("unix", filepath.Join(dir, "X5"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, d := range []string{":5", ":5.0", "unix:5"} {
		if !displayReachable(d) {
			t.Errorf("%s: not reachable although a server listens on X5", d)
		}
	}
	for _, d := range []string{"localhost:10.0", "example.org:0", "weird"} {
		if !displayReachable(d) {
			t.Errorf("%s: a remote or unknown display must be left to the X library", d)
		}
	}
}

func TestDesktopRefusesAnUnreachableDisplay(t *testing.T) {
	useSocketDir(t, t.TempDir())
	called := false
	fake := func(context.Context, paths.Paths, bool, string, *slog.Logger) error { called = true; return nil }
	e, _, stderr := testEnv(map[string]string{"DISPLAY": ":5"})
	code := execute(context.Background(), e, []string{"--home", filepath.Join(t.TempDir(), "h")}, fake)
	if code != ExitError || called {
		t.Fatalf("exit %d, desktop called %v; want 1 without starting it", code, called)
	}
	if !strings.Contains(stderr.String(), "Cannot reach the display :5") || !strings.Contains(stderr.String(), "routinely daemon") {
		t.Fatalf("stderr:\n%s", stderr)
	}
}
