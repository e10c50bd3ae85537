//go:build linux

package autostart

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Paths that exercise every quoting rule of the Exec key.
var awkwardPaths = []struct {
	name, target string
	wantExec     string // the Exec= line exactly as it must appear in the file
}{
	{"plain", "/opt/routinely/routinely", `Exec=/opt/routinely/routinely --background`},
	{"space", "/home/ann/My Apps/routinely", `Exec="/home/ann/My Apps/routinely" --background`},
	{"percent", "/home/ann/100%/routinely", `Exec=/home/ann/100%%/routinely --background`},
	{"percent quoted", "/home/ann/100 %d/routinely", `Exec="/home/ann/100 %%d/routinely" --background`},
	{"double quote", `/home/ann/"q"/routinely`, `Exec="/home/ann/\\"q\\"/routinely" --background`},
	{"single quote", `/home/ann/it's/routinely`, `Exec="/home/ann/it's/routinely" --background`},
	{"dollar and backquote", "/home/ann/$HOME`x`/routinely", "Exec=\"/home/ann/\\\\$HOME\\\\`x\\\\`/routinely\" --background"},
	{"backslash", `/home/ann/a\b/routinely`, `Exec="/home/ann/a\\\\b/routinely" --background`},
	{"unicode", "/home/zoë/Программы/日本/routinely", "Exec=/home/zoë/Программы/日本/routinely --background"},
	{"shell chars", "/tmp/a&b;c|d(e)*?#~<>/routinely", `Exec="/tmp/a&b;c|d(e)*?#~<>/routinely" --background`},
	{"tab", "/tmp/a\tb/routinely", `Exec="/tmp/a\tb/routinely" --background`},
}

func TestRenderDesktopEntryExecQuoting(t *testing.T) {
	for _, tc := range awkwardPaths {
		t.Run(tc.name, func(t *testing.T) {
			text, err := renderDesktopEntry(tc.target, bg)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, "\n"+tc.wantExec+"\n") {
				t.Errorf("rendered entry lacks %s\n%s", tc.wantExec, text)
			}
			// Read back with our parser: the first Exec argument is the path, byte for byte.
			e, err := parseDesktopEntry(text)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := e.target()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.target {
				t.Errorf("Exec round trip = %q, want %q", got, tc.target)
			}
			args, _ := splitExec(e["Exec"])
			if len(args) != 2 || args[1] != BackgroundFlag {
				t.Errorf("Exec args = %q, want [path --background]", args)
			}
			if e["TryExec"] != tc.target {
				t.Errorf("TryExec = %q, want %q", e["TryExec"], tc.target)
			}
			for k, want := range map[string]string{
				"Type": "Application", "Name": "Routinely", "Icon": AppID, "Terminal": "false",
				"X-GNOME-Autostart-enabled": "true", entryKeyMarker: AppID,
			} {
				if e[k] != want {
					t.Errorf("%s = %q, want %q", k, e[k], want)
				}
			}
			validateDesktopFile(t, text)
		})
	}
}

func TestRenderDesktopEntryRefusesNUL(t *testing.T) {
	if _, err := renderDesktopEntry("/tmp/a\x00b", bg); !errors.Is(err, ErrUnrepresentable) {
		t.Fatalf("err = %v, want ErrUnrepresentable", err)
	}
}

// validateDesktopFile runs the reference validator (desktop-file-utils) on text saved under our
// file name; it checks the Exec quoting and escaping independently of our parser.
func validateDesktopFile(t *testing.T, text string) {
	t.Helper()
	bin, err := exec.LookPath("desktop-file-validate")
	if err != nil {
		t.Fatalf("desktop-file-validate not found: install desktop-file-utils (apt-get install desktop-file-utils, or `make deps`): %v", err)
	}
	p := filepath.Join(t.TempDir(), AppID+".desktop")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, p).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("desktop-file-validate: %v\n%s\n--- entry ---\n%s", err, out, text)
	}
}

// The validator must actually reject a broken Exec, or the checks above prove nothing.
func TestValidatorRejectsBadQuoting(t *testing.T) {
	bin, err := exec.LookPath("desktop-file-validate")
	if err != nil {
		t.Fatalf("desktop-file-validate not found: install desktop-file-utils: %v", err)
	}
	p := filepath.Join(t.TempDir(), AppID+".desktop")
	bad := "[Desktop Entry]\nType=Application\nName=x\nExec=/home/ann/My Apps/$x --background\n"
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, p).CombinedOutput(); err == nil {
		t.Fatalf("validator accepted an unquoted $: %s", out)
	}
}

func TestSplitExec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`a b`, []string{"a", "b"}},
		{`"a b" c`, []string{"a b", "c"}},
		{`a %f %U`, []string{"a"}},
		{`a 100%%`, []string{"a", "100%"}},
		{`"x\"y\$z\\w\` + "`" + `"`, []string{"x\"y$z\\w`"}},
		{`""`, []string{""}},
	} {
		got, err := splitExec(tc.in)
		if err != nil {
			t.Errorf("splitExec(%q): %v", tc.in, err)
			continue
		}
		if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") || len(got) != len(tc.want) {
			t.Errorf("splitExec(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, err := splitExec(`"open`); !errors.Is(err, ErrMalformed) {
		t.Errorf("unterminated quote: err = %v, want ErrMalformed", err)
	}
}

func TestHiddenByUser(t *testing.T) {
	for _, tc := range []struct {
		extra string
		want  bool
	}{
		{"", false},
		{"Hidden=true\n", true},
		{"Hidden=false\n", false},
		{"X-GNOME-Autostart-enabled=false\n", true},
		{"X-GNOME-Autostart-enabled = false\n", true},
	} {
		e, err := parseDesktopEntry("[Desktop Entry]\nExec=/bin/x\n" + tc.extra + "[Other]\nHidden=true\n")
		if err != nil {
			t.Fatal(err)
		}
		if got := e.hiddenByUser(); got != tc.want {
			t.Errorf("with %q: hiddenByUser = %v, want %v", tc.extra, got, tc.want)
		}
	}
}
