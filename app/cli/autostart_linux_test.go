// The login item checked here is the XDG entry.

package cli

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routinely/routinely/app/paths"
)

// A binary without the desktop app refuses to write a login item (exit 2, nothing written) and
// says what to use: the desktop build, or the daemon's systemd user unit.
func TestAutostartEnableRefusedWithoutDesktop(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	e, stdout, stderr := testEnv(nil)
	if code := execute(context.Background(), e, []string{"--home", t.TempDir(), "autostart", "enable"}, nil); code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitUsage, stderr)
	}
	for _, want := range []string{"without the desktop app", "make build", "packaging/systemd/routinely-daemon.service", "Nothing was changed"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout: %q", stdout)
	}
	if entries, _ := filepath.Glob(filepath.Join(xdg, "autostart", "*")); len(entries) != 0 {
		t.Fatalf("a login item was written: %v", entries)
	}
}

// autostart enable with --home writes that profile into the login item; status from another
// profile says the item is not this one's and names the command that makes it so.
func TestAutostartEnableWritesTheProfile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	desktop := DesktopFunc(func(context.Context, paths.Paths, bool, string, *slog.Logger) error { return nil })
	home, err := paths.Resolve(filepath.Join(t.TempDir(), "work"))
	if err != nil {
		t.Fatal(err)
	}
	e, stdout, stderr := testEnv(nil)
	if code := execute(context.Background(), e, []string{"--home", home.State, "autostart", "enable"}, desktop); code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if want := "--background --home " + home.State; !strings.Contains(stdout.String(), want) {
		t.Fatalf("stdout lacks %q:\n%s", want, stdout)
	}
	entry, err := os.ReadFile(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "autostart", "io.routinely.app.desktop"))
	if err != nil || !strings.Contains(string(entry), "--background --home "+home.State) {
		t.Fatalf("login item: %v\n%s", err, entry)
	}

	other := filepath.Join(t.TempDir(), "other")
	e, stdout, _ = testEnv(nil)
	if code := execute(context.Background(), e, []string{"--home", other, "autostart", "status"}, desktop); code != ExitOK {
		t.Fatalf("status exit %d", code)
	}
	if want := "'routinely --home " + other + " autostart enable' points it at this one"; !strings.Contains(stdout.String(), want) {
		t.Fatalf("status from another profile lacks %q:\n%s", want, stdout)
	}
}
