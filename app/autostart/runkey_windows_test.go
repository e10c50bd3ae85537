package autostart

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows/registry"
)

// The Run-key end to end against scratch keys under HKCU\Software (runs on Windows CI only).
func TestRunKeyEndToEnd(t *testing.T) {
	base := fmt.Sprintf(`Software\RoutinelyTest-%d`, os.Getpid())
	runPath, approvedPath := base+`\Run`, base+`\StartupApproved\Run`
	t.Cleanup(func() {
		registry.DeleteKey(registry.CURRENT_USER, approvedPath)
		registry.DeleteKey(registry.CURRENT_USER, base+`\StartupApproved`)
		registry.DeleteKey(registry.CURRENT_USER, runPath)
		registry.DeleteKey(registry.CURRENT_USER, base)
	})
	m := NewRunKey(runPath, approvedPath)
	exe := fakeBinary(t, filepath.Join(t.TempDir(), "My Apps 100%"), "routinely.exe")

	st, err := m.Current(exe)
	mustStatus(t, st, err, Disabled, false)

	k, _, err := registry.CreateKey(registry.CURRENT_USER, runPath, registry.ALL_ACCESS)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	k.SetStringValue("routinely-old", `"C:\old\routinely.exe" --background`)

	for i := 0; i < 2; i++ {
		st, err = m.Enable(exe)
		mustStatus(t, st, err, Enabled, true)
	}
	v, _, err := k.GetStringValue(RunValueName)
	if want := `"` + exe + `" --background`; err != nil || v != want {
		t.Fatalf("Run value = %q, %v; want %q", v, err, want)
	}
	if _, _, err := k.GetStringValue("routinely-old"); err == nil {
		t.Error("stale Run value survived enable")
	}

	// The user switches it off in Task Manager: reported, and never overridden by enable.
	a, _, err := registry.CreateKey(registry.CURRENT_USER, approvedPath, registry.ALL_ACCESS)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	off := []byte{0x03, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	a.SetBinaryValue(RunValueName, off)
	st, err = m.Current(exe)
	mustStatus(t, st, err, DisabledByUser, true)
	st, err = m.Enable(exe)
	mustStatus(t, st, err, DisabledByUser, true)
	if b, _, _ := a.GetBinaryValue(RunValueName); !bytes.Equal(b, off) {
		t.Errorf("StartupApproved overridden: % x", b)
	}

	st, err = m.Disable()
	mustStatus(t, st, err, Disabled, false)
	if _, _, err := k.GetStringValue(RunValueName); err == nil {
		t.Error("Run value survived disable")
	}
}
