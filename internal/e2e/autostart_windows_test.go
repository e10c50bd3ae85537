package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/windows/registry"
)

// The login item on Windows is the value Routinely under this key of HKEY_CURRENT_USER.
const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

// The desktop build's `autostart enable` writes the Run value that Windows' own reg.exe shows,
// starting that binary with --background; `status` reports it enabled and pointing here;
// `disable` removes it, and reg.exe no longer finds it. The user's own value, if any, is put back
// afterwards. The desktop build is $ROUTINELY_E2E_DESKTOP_BIN (cgo: `make windows`, or
// test-windows.sh builds it); the nogui build refuses to write a login item.
func TestAutostartWritesTheRunKeyThatRegShows(t *testing.T) {
	desktop := os.Getenv("ROUTINELY_E2E_DESKTOP_BIN")
	if desktop == "" {
		t.Fatal("set ROUTINELY_E2E_DESKTOP_BIN to a desktop build of routinely.exe (make windows); make test-windows does")
	}
	keepRunValue(t)
	home := newHome(t, hourly)
	run := func(t *testing.T, home string, args ...string) (string, string, int) {
		t.Helper()
		return runBin(t, desktop, home, args...)
	}
	stdout, stderr, code := run(t, home, "autostart", "enable")
	if code != 0 {
		t.Fatalf("autostart enable: exit %d\n%s%s", code, stdout, stderr)
	}
	want := `"` + desktop + `" --background`
	if out, err := regQuery(t); err != nil || !strings.Contains(out, "REG_SZ") || !strings.Contains(out, want) {
		t.Fatalf("reg query after enable (%v):\n%s\nwant a REG_SZ %s", err, out, want)
	}
	var st struct {
		State      string `json:"state"`
		Location   string `json:"location"`
		PointsHere bool   `json:"points_here"`
	}
	stdout, _, code = run(t, home, "autostart", "status", "--json")
	if err := json.Unmarshal([]byte(stdout), &st); err != nil || code != 0 || st.State != "enabled" || !st.PointsHere ||
		!strings.EqualFold(st.Location, `HKCU\`+runKey+`\Routinely`) {
		t.Fatalf("autostart status --json after enable: exit %d, %+v (%v)\n%s", code, st, err, stdout)
	}

	if stdout, stderr, code := run(t, home, "autostart", "disable"); code != 0 {
		t.Fatalf("autostart disable: exit %d\n%s%s", code, stdout, stderr)
	}
	out, err := regQuery(t)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("reg query after disable: %v, want exit 1 (value not found):\n%s", err, out)
	}
}

// regQuery runs `reg query HKCU\...\Run /v Routinely` and returns its output and error (exit 1
// when the value does not exist).
func regQuery(t *testing.T) (string, error) {
	t.Helper()
	out, err := exec.Command("reg", "query", `HKCU\`+runKey, "/v", "Routinely").CombinedOutput()
	return string(out), err
}

// keepRunValue puts the user's Routinely Run value (or its absence) back when the test ends: on
// a developer's Windows machine the test must not change what starts at their login.
func keepRunValue(t *testing.T) {
	t.Helper()
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE|registry.SET_VALUE)
	if err != nil {
		t.Fatalf("open HKCU\\%s: %v", runKey, err)
	}
	old, _, getErr := k.GetStringValue("Routinely")
	t.Cleanup(func() {
		defer k.Close()
		if getErr == nil {
			_ = k.SetStringValue("Routinely", old)
		} else {
			_ = k.DeleteValue("Routinely")
		}
	})
}
