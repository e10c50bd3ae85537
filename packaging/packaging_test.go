// Package packaging checks the per-OS packaging files kept in this directory.
package packaging

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/routinely/routinely/app/autostart"
	"github.com/routinely/routinely/app/owning"
)

// unitFile parses a systemd unit (systemd.syntax(7)): [Section] headers and Key=Value lines,
// # and ; comments. Repeated keys keep every value.
func unitFile(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "["):
			section = strings.Trim(l, "[]")
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				t.Fatalf("%s: not key=value: %q", path, l)
			}
			keys[section+"."+k] = append(keys[section+"."+k], v)
		}
	}
	return keys
}

func TestSystemdUnits(t *testing.T) {
	for _, tc := range []struct {
		file, exec, wantedBy string
		boundToSession       bool
		drains               bool // an owner: stopping must let its runs finish
	}{
		{"routinely-daemon.service", "routinely daemon --wait", "default.target", false, true},
		{"routinely-desktop.service", "routinely --background", "graphical-session.target", true, true},
		{"routinely-hub.service", "routinely hub", "default.target", false, false},
	} {
		u := unitFile(t, filepath.Join("systemd", tc.file))
		if got := u["Service.ExecStart"]; len(got) != 1 || got[0] != tc.exec {
			t.Errorf("%s: ExecStart = %q, want %q", tc.file, got, tc.exec)
		}
		if got := u["Install.WantedBy"]; len(got) != 1 || got[0] != tc.wantedBy {
			t.Errorf("%s: WantedBy = %q, want %q", tc.file, got, tc.wantedBy)
		}
		if tc.boundToSession {
			for _, k := range []string{"Unit.PartOf", "Unit.After"} {
				if got := u[k]; len(got) != 1 || got[0] != "graphical-session.target" {
					t.Errorf("%s: %s = %q, want graphical-session.target", tc.file, k, got)
				}
			}
		}
		// A config error (78) must not turn into a restart loop.
		if got := strings.Join(u["Service.RestartPreventExitStatus"], " "); !strings.Contains(got, "78") {
			t.Errorf("%s: RestartPreventExitStatus = %q, want it to include 78", tc.file, got)
		}
		if tc.drains {
			checkDrainOnStop(t, tc.file, u)
		}
		verifyUnit(t, tc.file)
	}
}

// checkDrainOnStop checks that stopping the unit lets routinely drain (systemd.kill(5)):
// SIGTERM to the main process only (KillMode=mixed; the default control-group would signal the
// runs' processes at once), and a stop timeout longer than the drain, so that systemd's SIGKILL
// never cuts a drain the process would finish by itself.
func checkDrainOnStop(t *testing.T, file string, u map[string][]string) {
	t.Helper()
	if got := u["Service.KillMode"]; len(got) != 1 || got[0] != "mixed" {
		t.Errorf("%s: KillMode = %q, want mixed", file, got)
	}
	got := u["Service.TimeoutStopSec"]
	if len(got) != 1 {
		t.Fatalf("%s: TimeoutStopSec = %q, want one value longer than the drain (%s)", file, got, owning.DrainTimeout)
	}
	stop, err := systemdTimespan(got[0])
	if err != nil {
		t.Fatalf("%s: TimeoutStopSec=%s: %v", file, got[0], err)
	}
	// The drain ends by itself after DrainTimeout; releasing and exiting take moments more.
	if margin := 30 * time.Second; stop < owning.DrainTimeout+margin {
		t.Errorf("%s: TimeoutStopSec=%s (%s) is not %s longer than the drain bound %s", file, got[0], stop, margin, owning.DrainTimeout)
	}
	for _, k := range []string{"Service.SendSIGKILL", "Service.KillSignal", "Service.TimeoutSec"} {
		if v, ok := u[k]; ok {
			t.Errorf("%s: %s=%q would change how a stop ends the drain", file, k, v)
		}
	}
}

// systemdTimespan parses the forms of systemd.time(7) used in the units: a number of seconds, or
// numbers with the units s, min, h (e.g. "6min", "5min 30s").
func systemdTimespan(v string) (time.Duration, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	var total time.Duration
	for _, part := range strings.Fields(v) {
		d, err := time.ParseDuration(strings.Replace(part, "min", "m", 1))
		if err != nil {
			return 0, fmt.Errorf("not a systemd time span: %w", err)
		}
		total += d
	}
	return total, nil
}

// verifyUnit runs `systemd-analyze verify --user` on a copy of the unit whose ExecStart names an
// executable that exists (the units rely on systemd's search path finding routinely), and wants
// no complaint: systemd logs unknown keys and bad values and exits 0 all the same.
func verifyUnit(t *testing.T, file string) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze not found: install systemd (apt-get install systemd, or `make deps`): %v", err)
	}
	data, err := os.ReadFile(filepath.Join("systemd", file))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.Replace(string(data), "\nExecStart=routinely ", "\nExecStart="+self+" ", 1)
	if unit == string(data) {
		t.Fatalf("%s: no 'ExecStart=routinely ' line to point at an executable", file)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(unit), 0o600); err != nil {
		t.Fatal(err)
	}
	runtime := filepath.Join(dir, "run") // a user manager needs $XDG_RUNTIME_DIR, even for verify
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "verify", "--user", "--man=no", path)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "SYSTEMD_LOG_COLOR=0")
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", file, err, out)
	}
}

func TestDesktopEntryTemplate(t *testing.T) {
	path := filepath.Join("linux", autostart.AppID+".desktop")
	bin, err := exec.LookPath("desktop-file-validate")
	if err != nil {
		t.Fatalf("desktop-file-validate not found: install desktop-file-utils (apt-get install desktop-file-utils, or `make deps`): %v", err)
	}
	if out, err := exec.Command(bin, path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("desktop-file-validate %s: %v\n%s", path, err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The template says what `fyne package` writes from FyneApp.toml: keep the two in step.
	var meta struct {
		Details     struct{ Name string }
		LinuxAndBSD struct {
			GenericName, Comment string
			Categories, Keywords []string
		}
	}
	if _, err := toml.DecodeFile(filepath.Join("..", "FyneApp.toml"), &meta); err != nil {
		t.Fatal(err)
	}
	l := meta.LinuxAndBSD
	for _, want := range []string{
		"\nIcon=" + autostart.AppID + "\n", "\nExec=routinely\n", "\nTerminal=false\n",
		"\nName=" + meta.Details.Name + "\n", "\nStartupWMClass=" + meta.Details.Name + "\n",
		"\nGenericName=" + l.GenericName + "\n", "\nComment=" + l.Comment + "\n",
		"\nCategories=" + strings.Join(l.Categories, ";") + ";\n",
		"\nKeywords=" + strings.Join(l.Keywords, ";") + ";\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %q", path, strings.TrimSpace(want))
		}
	}
}

// The macOS post-step runs on macOS only; here it runs against stand-ins for plutil and
// codesign that record their arguments, to check what it asks of them.
func TestMacOSPostStep(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("macos", "set-lsuielement.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	log := filepath.Join(dir, "calls.log")
	os.MkdirAll(bin, 0o755)
	for _, tool := range []string{"plutil", "codesign"} {
		stub := "#!/bin/sh\necho \"" + tool + " $*\" >> '" + log + "'\n"
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	app := filepath.Join(dir, "Routinely.app")
	plist := filepath.Join(app, "Contents", "Info.plist")
	os.MkdirAll(filepath.Join(app, "Contents", "_CodeSignature"), 0o755)
	os.WriteFile(plist, []byte("<plist/>"), 0o644)

	cmd := exec.Command("sh", script, app)
	cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	calls, _ := os.ReadFile(log)
	want := "plutil -replace LSUIElement -bool YES " + plist + "\n" +
		"plutil -lint " + plist + "\n" +
		"codesign --force --sign - " + app + "\n"
	if string(calls) != want {
		t.Fatalf("calls:\n%s\nwant:\n%s", calls, want)
	}

	// Not a bundle: a clear failure, nothing called.
	os.Remove(log)
	cmd = exec.Command("sh", script, filepath.Join(dir, "Nope.app"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "not found") {
		t.Fatalf("missing bundle: err=%v out=%s", err, out)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatal("tools were called for a missing bundle")
	}
}
