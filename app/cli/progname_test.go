package cli

import "testing"

// setProgName keeps argv[0] as typed, so a hint runs the same binary again, and refuses names a
// hint could not carry.
func TestSetProgName(t *testing.T) {
	defer func(old string) { progName = old }(progName)
	for _, tc := range []struct{ argv0, want, prefix string }{
		{"routinely", "routinely", "routinely"},
		{"build/routinely-nogui", "build/routinely-nogui", "routinely-nogui"},
		{"/usr/local/bin/routinely", "/usr/local/bin/routinely", "routinely"},
		{`C:\Tools\routinely.exe`, `C:\Tools\routinely.exe`, "routinely"},
		{"my routinely", "routinely", "routinely"}, // a space: the default stays
		{"routinely%d", "routinely", "routinely"},  // a format verb: the default stays
		{"", "routinely", "routinely"},
	} {
		progName = "routinely"
		setProgName(tc.argv0)
		if progName != tc.want {
			t.Errorf("setProgName(%q): progName %q, want %q", tc.argv0, progName, tc.want)
		}
		if tc.argv0 != `C:\Tools\routinely.exe` && errPrefix() != tc.prefix { // filepath is the host's
			t.Errorf("setProgName(%q): prefix %q, want %q", tc.argv0, errPrefix(), tc.prefix)
		}
	}
}
