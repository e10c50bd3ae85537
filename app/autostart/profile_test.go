package autostart

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// An app started on a profile of its own (--home, ROUTINELY_HOME) writes that profile into the
// login item, each kind of item keeps it when read back, and an item for another profile (or
// the default one) does not count as pointing here.
func TestLoginItemStartsTheProfile(t *testing.T) {
	home := filepath.Join(t.TempDir(), "my profile") // a space: quoting is exercised too
	for _, tc := range []struct {
		name string
		m    func(dir string) Manager
		file string
	}{
		{"xdg", func(dir string) Manager { return NewXDG(dir) }, filepath.Join("autostart", AppID+".desktop")},
		{"launchagent", func(dir string) Manager { return NewLaunchAgent(dir) }, AppID + ".plist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := fakeBinary(t, filepath.Join(dir, "bin"), "routinely")
			m := tc.m(dir).WithHome(home)
			st, err := m.Enable(exe)
			mustStatus(t, st, err, Enabled, true)
			if st.Home != home {
				t.Fatalf("Home = %q, want %q", st.Home, home)
			}
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			// The entry's own quoting may escape the path (a desktop entry doubles backslashes);
			// st.Home above is the path as read back.
			if !strings.Contains(string(data), HomeFlag) || !strings.Contains(string(data), filepath.Base(home)) {
				t.Fatalf("the entry does not pass %s %q:\n%s", HomeFlag, home, data)
			}
			// The default profile's app, and another profile's, see an item that is not theirs.
			st, err = tc.m(dir).Current(exe)
			mustStatus(t, st, err, Enabled, false)
			st, err = tc.m(dir).WithHome(home + "-other").Current(exe)
			mustStatus(t, st, err, Enabled, false)
			// Refresh by another profile's app leaves the person's choice alone, and when the
			// binary has moved it follows the binary but keeps the entry's profile.
			st, err = tc.m(dir).Refresh(exe)
			mustStatus(t, st, err, Enabled, false)
			moved := fakeBinary(t, filepath.Join(dir, "bin2"), "routinely")
			st, err = tc.m(dir).Refresh(moved)
			mustStatus(t, st, err, Enabled, false)
			st, err = m.Current(moved)
			mustStatus(t, st, err, Enabled, true)
			if st.Home != home {
				t.Fatalf("after following the binary: Home = %q, want %q", st.Home, home)
			}
			// Enabling from the default profile's app writes an entry without --home.
			st, err = tc.m(dir).Enable(moved)
			mustStatus(t, st, err, Enabled, true)
			if st.Home != "" {
				t.Fatalf("Home = %q after enabling the default profile", st.Home)
			}
		})
	}
}

// The Windows Run value carries the profile too, quoted when it holds a space, and reads back.
func TestRunValueWithProfile(t *testing.T) {
	for _, tc := range []struct {
		home, want string
	}{
		{`C:\Users\Ann\Routinely work`, `"C:\Program Files\Routinely\routinely.exe" --background --home "C:\Users\Ann\Routinely work"`},
		{`D:\profiles\ann`, `"C:\Program Files\Routinely\routinely.exe" --background --home D:\profiles\ann`},
	} {
		got, err := renderRunValue(`C:\Program Files\Routinely\routinely.exe`, Manager{}.WithHome(tc.home).args())
		if err != nil || got != tc.want {
			t.Fatalf("renderRunValue = %q, %v; want %q", got, err, tc.want)
		}
		if args := parseRunArgs(got); !reflect.DeepEqual(args, []string{BackgroundFlag, HomeFlag, tc.home}) || homeArg(args) != tc.home {
			t.Fatalf("parseRunArgs(%q) = %q", got, args)
		}
	}
	for _, bad := range []string{`C:\a "b`, `C:\with space\`} {
		if _, err := renderRunValue(`C:\r.exe`, []string{HomeFlag, bad}); err == nil {
			t.Errorf("renderRunValue accepted the argument %q", bad)
		}
	}
	if got := homeArg([]string{"--background", "--home=/x"}); got != "/x" {
		t.Errorf("homeArg(--home=/x) = %q", got)
	}
}
