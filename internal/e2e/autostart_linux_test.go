package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The nogui binary refuses to write a login item it could not start anything with: exit 2, the
// desktop build or the daemon's systemd unit named, and no entry written. (The XDG entry is the
// login item on Linux.)
func TestNoguiAutostartEnableRefused(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg) // testEnv passes the environment on
	home := newHome(t, hourly)
	stdout, stderr, code := run(t, home, "autostart", "enable")
	if code != 2 {
		t.Fatalf("autostart enable: exit %d, want 2; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "without the desktop app") || !strings.Contains(stderr, "routinely-daemon.service") || stdout != "" {
		t.Fatalf("stdout %q, stderr:\n%s\nwant the reason and the systemd unit on stderr only", stdout, stderr)
	}
	if entries, _ := filepath.Glob(filepath.Join(xdg, "autostart", "*")); len(entries) != 0 {
		t.Fatalf("a login item was written: %v", entries)
	}
	if _, stderr, code := run(t, home, "autostart", "status"); code != 0 {
		t.Fatalf("autostart status: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(xdg, "autostart")); err == nil {
		t.Fatal("autostart status created the autostart directory")
	}
}
