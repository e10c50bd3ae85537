//go:build !windows

package autostart

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"howett.net/plist"
)

func TestRenderLaunchAgent(t *testing.T) {
	for _, target := range []string{
		"/Applications/Routinely.app/Contents/MacOS/routinely",
		"/Users/ann/My Apps/routinely",
		`/Users/ann/"quoted" & <tagged>/routinely`,
		"/Users/ann/100%/routinely",
		"/Users/zoë/Программы/日本/routinely",
		`/Users/ann/a\b $HOME/routinely`,
	} {
		t.Run(target, func(t *testing.T) {
			data, err := renderLaunchAgent(target, bg)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			format, err := plist.Unmarshal(data, &got)
			if err != nil {
				t.Fatalf("decode: %v\n%s", err, data)
			}
			if format != plist.XMLFormat {
				t.Errorf("format %d, want XML", format)
			}
			if got["Label"] != AppID {
				t.Errorf("Label = %v", got["Label"])
			}
			args, _ := got["ProgramArguments"].([]any)
			if len(args) != 2 || args[0] != target || args[1] != BackgroundFlag {
				t.Errorf("ProgramArguments = %q, want [%q --background]", args, target)
			}
			if got["RunAtLoad"] != true {
				t.Errorf("RunAtLoad = %v, want true", got["RunAtLoad"])
			}
			if _, ok := got["KeepAlive"]; ok {
				t.Error("KeepAlive present: Quit would be undone by launchd")
			}
			if strings.ContainsAny(target, "&<") && (strings.Contains(string(data), "& ") || strings.Contains(string(data), "<tagged>")) {
				t.Errorf("XML not escaped:\n%s", data)
			}
		})
	}
	if _, err := renderLaunchAgent("/a\x00b", bg); !errors.Is(err, ErrUnrepresentable) {
		t.Errorf("NUL: err = %v, want ErrUnrepresentable", err)
	}
}

func TestLaunchAgentEndToEnd(t *testing.T) {
	root := t.TempDir()
	agents := filepath.Join(root, "LaunchAgents")
	m := NewLaunchAgent(agents)
	p := filepath.Join(agents, AppID+".plist")
	exe := fakeBinary(t, filepath.Join(root, "bin dir"), "routinely")

	// A stale agent of ours under another name is removed on enable; others are kept.
	stale := filepath.Join(agents, "routinely.plist")
	foreign := filepath.Join(agents, "com.example.other.plist")
	old, _ := renderLaunchAgent("/old/routinely", bg)
	other, _ := plist.Marshal(map[string]any{"Label": "com.example.other", "Program": "/bin/other"}, plist.XMLFormat)
	os.MkdirAll(agents, 0o700)
	os.WriteFile(stale, old, 0o644)
	os.WriteFile(foreign, other, 0o644)

	st, err := m.Enable(exe)
	mustStatus(t, st, err, Enabled, true)
	st, err = m.Enable(exe)
	mustStatus(t, st, err, Enabled, true)
	if st.Location != p || st.Target != exe {
		t.Fatalf("status %+v", st)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale agent survived: %v", err)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("foreign agent touched: %v", err)
	}

	// Disabled=true in the file (launchd.plist(5)) is the user's switch.
	var doc map[string]any
	data, _ := os.ReadFile(p)
	if _, err := plist.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["Disabled"] = true
	edited, _ := plist.Marshal(doc, plist.BinaryFormat) // users' tools may save binary plists
	os.WriteFile(p, edited, 0o644)
	st, err = m.Current(exe)
	mustStatus(t, st, err, DisabledByUser, true)
	st, err = m.Refresh(exe)
	mustStatus(t, st, err, DisabledByUser, true)

	st, err = m.Disable()
	mustStatus(t, st, err, Disabled, false)
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("agent not removed: %v", err)
	}
}

func TestLaunchAgentLaunchctlSwitch(t *testing.T) {
	root := t.TempDir()
	exe := fakeBinary(t, filepath.Join(root, "bin"), "routinely")
	off := true
	m := Manager{b: launchAgentBackend{dir: root, userDisabled: func(label string) (bool, error) {
		if label != AppID {
			t.Errorf("asked about %q", label)
		}
		return off, nil
	}}}
	st, err := m.Enable(exe)
	mustStatus(t, st, err, DisabledByUser, true) // enable never flips the system's switch
	off = false
	st, err = m.Current(exe)
	mustStatus(t, st, err, Enabled, true)
}

func TestPrefersBundleExecutable(t *testing.T) {
	root := t.TempDir()
	app := filepath.Join(root, "Applications", "Routinely.app")
	main := fakeBinary(t, filepath.Join(app, "Contents", "MacOS"), "Routinely")
	helper := fakeBinary(t, filepath.Join(app, "Contents", "Resources"), "routinely-cli")
	info, _ := plist.Marshal(map[string]any{"CFBundleExecutable": "Routinely", "LSUIElement": true}, plist.XMLFormat)
	if err := os.WriteFile(filepath.Join(app, "Contents", "Info.plist"), info, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "usr-local-bin-routinely")
	if err := os.Symlink(helper, link); err != nil {
		t.Fatal(err)
	}
	m := NewLaunchAgent(filepath.Join(root, "LaunchAgents"))
	for _, exe := range []string{main, helper, link} {
		st, err := m.Enable(exe)
		if err != nil {
			t.Fatal(err)
		}
		if st.Target != main {
			t.Errorf("Enable(%s): target %q, want the bundle executable %q", exe, st.Target, main)
		}
	}
	// Outside a bundle the binary itself is used.
	plain := fakeBinary(t, filepath.Join(root, "bin"), "routinely")
	if st, _ := m.Enable(plain); st.Target != plain {
		t.Errorf("plain binary: target %q", st.Target)
	}
}

func TestParsePrintDisabled(t *testing.T) {
	ventura := []byte("disabled services = {\n\t\"com.apple.ScreenReaderUIServer\" => disabled\n\t\"io.routinely.app\" => disabled\n}\n")
	monterey := []byte("disabled services = {\n\t\"io.routinely.app\" => true\n}\n")
	enabled := []byte("disabled services = {\n\t\"io.routinely.app\" => enabled\n\t\"io.routinely.app.other\" => disabled\n}\n")
	for _, tc := range []struct {
		name string
		out  []byte
		want bool
	}{{"ventura", ventura, true}, {"monterey", monterey, true}, {"enabled", enabled, false}, {"absent", []byte("disabled services = {\n}\n"), false}} {
		if got := parsePrintDisabled(tc.out, AppID); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
