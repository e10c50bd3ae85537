//go:build linux

package autostart

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func autostartFiles(t *testing.T, configHome string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(configHome, "autostart", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The end-to-end scenario, in a temporary XDG_CONFIG_HOME.
func TestXDGEndToEnd(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "config")
	m := NewXDG(cfg)
	entry := filepath.Join(cfg, "autostart", AppID+".desktop")
	exe := fakeBinary(t, filepath.Join(root, "My Apps", "v1 100%"), "routinely")

	st, err := m.Current(exe)
	mustStatus(t, st, err, Disabled, false)

	// Enable twice: one file, same content, pointing here.
	st, err = m.Enable(exe)
	mustStatus(t, st, err, Enabled, true)
	first, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	fi1, _ := os.Stat(entry)
	st, err = m.Enable(exe)
	mustStatus(t, st, err, Enabled, true)
	if files := autostartFiles(t, cfg); len(files) != 1 || files[0] != entry {
		t.Fatalf("after enabling twice: files %q, want just %s", files, entry)
	}
	second, _ := os.ReadFile(entry)
	fi2, _ := os.Stat(entry)
	if string(first) != string(second) || !os.SameFile(fi1, fi2) {
		t.Fatal("second enable rewrote an identical entry")
	}
	if st.Target != exe || st.Location != entry {
		t.Fatalf("status target/location = %q %q", st.Target, st.Location)
	}
	validateDesktopFile(t, string(first))

	// Move the binary: the old entry no longer points here; enable follows it.
	moved := filepath.Join(root, "elsewhere", "routinely")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(exe, moved); err != nil {
		t.Fatal(err)
	}
	st, err = m.Current(moved)
	mustStatus(t, st, err, Enabled, false)
	st, err = m.Enable(moved)
	mustStatus(t, st, err, Enabled, true)
	if st.Target != moved {
		t.Fatalf("after move: target %q, want %q", st.Target, moved)
	}
	data, _ := os.ReadFile(entry)
	if !strings.Contains(string(data), "TryExec="+moved+"\n") {
		t.Fatalf("entry does not follow the binary:\n%s", data)
	}

	// The user turns it off (Hidden=true, as the Autostart spec describes).
	if err := os.WriteFile(entry, append(data, []byte("Hidden=true\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = m.Current(moved)
	mustStatus(t, st, err, DisabledByUser, true)
	// The app's own start-up call leaves the user's choice alone...
	st, err = m.Refresh(moved)
	mustStatus(t, st, err, DisabledByUser, true)
	if now, _ := os.ReadFile(entry); !strings.Contains(string(now), "Hidden=true") {
		t.Fatal("Refresh re-enabled an entry the user disabled")
	}
	// ...and an explicit enable is the user's act: it turns it back on.
	st, err = m.Enable(moved)
	mustStatus(t, st, err, Enabled, true)

	// Disable: gone, and disabling again is fine.
	st, err = m.Disable()
	mustStatus(t, st, err, Disabled, false)
	if files := autostartFiles(t, cfg); len(files) != 0 {
		t.Fatalf("after disable: files %q remain", files)
	}
	st, err = m.Disable()
	mustStatus(t, st, err, Disabled, false)
}

// Refresh is what the app calls on its own: it follows a moved binary only while enabled.
func TestXDGRefreshNeverEnables(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "cfg")
	m := NewXDG(cfg)
	exe := fakeBinary(t, filepath.Join(root, "a"), "routinely")
	moved := fakeBinary(t, filepath.Join(root, "b"), "routinely")

	st, err := m.Refresh(exe)
	mustStatus(t, st, err, Disabled, false)
	if files := autostartFiles(t, cfg); len(files) != 0 {
		t.Fatalf("Refresh created %q while disabled", files)
	}

	if _, err := m.Enable(exe); err != nil {
		t.Fatal(err)
	}
	st, err = m.Refresh(moved)
	mustStatus(t, st, err, Enabled, true)
	if st.Target != moved {
		t.Fatalf("Refresh did not follow the binary: %+v", st)
	}

	entry := filepath.Join(cfg, "autostart", AppID+".desktop")
	data, _ := os.ReadFile(entry)
	if err := os.WriteFile(entry, append(data, "Hidden=true\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = m.Refresh(exe) // binary "moved back" while the user has it off
	mustStatus(t, st, err, DisabledByUser, false)
	if now, _ := os.ReadFile(entry); !strings.Contains(string(now), "Hidden=true") {
		t.Fatal("Refresh rewrote a user-disabled entry")
	}
}

func TestXDGGnomeSwitchIsDisabledByUser(t *testing.T) {
	root := t.TempDir()
	m := NewXDG(root)
	exe := fakeBinary(t, filepath.Join(root, "bin"), "routinely")
	if _, err := m.Enable(exe); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "autostart", AppID+".desktop")
	data, _ := os.ReadFile(p)
	off := strings.Replace(string(data), "X-GNOME-Autostart-enabled=true", "X-GNOME-Autostart-enabled=false", 1)
	if err := os.WriteFile(p, []byte(off), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := m.Current(exe)
	mustStatus(t, st, err, DisabledByUser, true)
}

func TestXDGResolvesSymlinks(t *testing.T) {
	root := t.TempDir()
	m := NewXDG(filepath.Join(root, "cfg"))
	real := fakeBinary(t, filepath.Join(root, "opt"), "routinely")
	link := filepath.Join(root, "bin", "routinely")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	st, err := m.Enable(link)
	mustStatus(t, st, err, Enabled, true)
	if st.Target != real {
		t.Fatalf("target %q, want the resolved %q", st.Target, real)
	}
	// Started through the symlink or directly, it is the same binary.
	st, err = m.Current(real)
	mustStatus(t, st, err, Enabled, true)
}

func TestXDGEnableRemovesStaleEntriesOfOurs(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "cfg")
	m := NewXDG(cfg)
	exe := fakeBinary(t, filepath.Join(root, "bin"), "routinely")
	old, _ := renderDesktopEntry("/old/place/routinely", bg)
	dir := filepath.Join(cfg, "autostart")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "routinely.desktop")
	foreign := filepath.Join(dir, "other.desktop")
	os.WriteFile(stale, []byte(old), 0o644)
	os.WriteFile(foreign, []byte("[Desktop Entry]\nType=Application\nName=Other\nExec=/usr/bin/other\n"), 0o644)

	if _, err := m.Enable(exe); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale entry of ours survived enable: %v", err)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("someone else's entry was touched: %v", err)
	}
	os.WriteFile(stale, []byte(old), 0o644)
	if _, err := m.Disable(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale entry of ours survived disable: %v", err)
	}
}

func TestXDGEnableMissingBinary(t *testing.T) {
	m := NewXDG(t.TempDir())
	if _, err := m.Enable(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, ErrExecutable) {
		t.Fatalf("err = %v, want ErrExecutable", err)
	}
}
