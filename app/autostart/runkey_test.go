package autostart

import (
	"errors"
	"slices"
	"testing"
)

func TestRenderRunValue(t *testing.T) {
	for _, tc := range []struct{ target, want string }{
		{`C:\Users\ann\AppData\Local\Programs\Routinely\routinely.exe`, `"C:\Users\ann\AppData\Local\Programs\Routinely\routinely.exe" --background`},
		{`C:\Program Files\Routinely\routinely.exe`, `"C:\Program Files\Routinely\routinely.exe" --background`},
		{`C:\Users\ann\100%\%APPDATA%\routinely.exe`, `"C:\Users\ann\100%\%APPDATA%\routinely.exe" --background`},
		{`C:\Users\Zoë\Программы\日本\routinely.exe`, `"C:\Users\Zoë\Программы\日本\routinely.exe" --background`},
		{`C:\it's & (x)\routinely.exe`, `"C:\it's & (x)\routinely.exe" --background`},
	} {
		got, err := renderRunValue(tc.target, bg)
		if err != nil {
			t.Fatalf("%s: %v", tc.target, err)
		}
		if got != tc.want {
			t.Errorf("renderRunValue(%q) = %q, want %q", tc.target, got, tc.want)
		}
		if back := parseRunValue(got); back != tc.target {
			t.Errorf("round trip %q -> %q", tc.target, back)
		}
	}
	for _, bad := range []string{`C:\a"b\routinely.exe`, "C:\\a\x00b.exe"} {
		if _, err := renderRunValue(bad, bg); !errors.Is(err, ErrUnrepresentable) {
			t.Errorf("renderRunValue(%q) err = %v, want ErrUnrepresentable", bad, err)
		}
	}
}

func TestParseRunValueUnquoted(t *testing.T) {
	for in, want := range map[string]string{
		`C:\Program Files\Routinely\routinely.exe --background`: `C:\Program Files\Routinely\routinely.exe`,
		`C:\tools\routinely.exe`:                                `C:\tools\routinely.exe`,
		`C:\tools\routinely --background`:                       `C:\tools\routinely`,
		`  "C:\x y\routinely.exe"`:                              `C:\x y\routinely.exe`,
	} {
		if got := parseRunValue(in); got != want {
			t.Errorf("parseRunValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestApprovedDisabled(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want bool
	}{
		{nil, false},
		{[]byte{0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, false},
		{[]byte{0x03, 0, 0, 0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x01}, true},
		{[]byte{0x06, 0, 0, 0}, false},
		{[]byte{0x07, 0, 0, 0}, true},
	} {
		if got := approvedDisabled(tc.b); got != tc.want {
			t.Errorf("approvedDisabled(% x) = %v, want %v", tc.b, got, tc.want)
		}
	}
}

func TestStaleRunValues(t *testing.T) {
	got := staleRunValues(map[string]string{
		"Routinely":         `"C:\new\routinely.exe" --background`,
		"routinely (old)":   `"C:\old\Routinely.EXE" --background`,
		"io.routinely.app":  `C:\older\routinely.exe --background`,
		"OneDrive":          `"C:\Program Files\Microsoft OneDrive\OneDrive.exe" /background`,
		"not-routinely-exe": `"C:\x\routinely-helper.exe"`,
	})
	slices.Sort(got)
	if want := []string{"io.routinely.app", "routinely (old)"}; !slices.Equal(got, want) {
		t.Fatalf("stale = %q, want %q", got, want)
	}
}

func TestSamePathWindows(t *testing.T) {
	if !samePathWindows(`C:\Program Files\Routinely\routinely.exe`, `c:/program files/routinely/ROUTINELY.exe`) {
		t.Error("case and separators should not matter")
	}
	if samePathWindows(`C:\a\routinely.exe`, `C:\b\routinely.exe`) {
		t.Error("different directories compared equal")
	}
}

func TestUnsupportedBackend(t *testing.T) {
	m := Manager{b: unsupportedBackend{}}
	st, err := m.Current("/x")
	if err != nil || st.State != Unsupported {
		t.Fatalf("Current = %+v, %v", st, err)
	}
	if st, err := m.Enable("/x"); !errors.Is(err, ErrUnsupported) || st.State != Unsupported {
		t.Fatalf("Enable = %+v, %v", st, err)
	}
	if st, err := m.Disable(); !errors.Is(err, ErrUnsupported) || st.State != Unsupported {
		t.Fatalf("Disable = %+v, %v", st, err)
	}
}
