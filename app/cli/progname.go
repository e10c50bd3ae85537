package cli

import (
	"path/filepath"
	"strings"
)

// progName is the command a person typed to run this binary, for the hints the CLI prints
// ("run 'build/routinely-nogui daemon --wait'"): a hint that names a binary they did not run
// cannot be pasted back. Execute sets it from os.Args[0]; tests that call execute keep the
// default, the installed name.
var progName = "routinely"

// setProgName sets progName from argv0 as typed: a name found on $PATH stays a bare name, a
// relative or absolute path stays that path, so the hint runs the same binary again. A name
// with a space or a '%' is not usable in a hint (and '%' would be read as a format verb), so the
// default stays then.
func setProgName(argv0 string) {
	if argv0 == "" || strings.ContainsAny(argv0, " %\t\n'\"") {
		return
	}
	progName = argv0
}

// errPrefix is the program's short name for the "NAME: error" line: the base name, without
// Windows' .exe.
func errPrefix() string {
	return strings.TrimSuffix(filepath.Base(progName), ".exe")
}
