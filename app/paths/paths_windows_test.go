package paths

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// privateDirPerm is how a directory Resolve created looks on Windows: os.Stat reports every
// writable directory as 0777, since Windows keeps who may use it in its ACL, not in mode bits
// (os.Chmod: only the owner-writable bit means anything there).
const privateDirPerm = 0o777

// The Windows counterpart of TestDefaultStateFollowsXDG: without --home or ROUTINELY_HOME the
// state directory is %LOCALAPPDATA%\Routinely (the user's Local AppData known folder), and
// routines.toml lives beside it. Lookup creates nothing, so the user's folder is left alone.
func TestDefaultStateIsLocalAppData(t *testing.T) {
	t.Setenv(EnvHome, "")
	local, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(local, "Routinely")
	if got, err := defaultState(); err != nil || got != want {
		t.Fatalf("defaultState() = %q, %v; want %q", got, err, want)
	}
	p, _, err := Lookup("")
	if err != nil || p.State != want || p.Config != filepath.Join(want, "routines.toml") || p.Journal != filepath.Join(want, "journal.db") {
		t.Fatalf("Lookup(\"\") = %+v, %v; want everything in %s", p, err, want)
	}
}
