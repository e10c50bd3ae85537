package journal

import (
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// uriT is URI for tests: the URI of path with params, or the test fails.
func uriT(tb testing.TB, path string, params url.Values) string {
	tb.Helper()
	u, err := URI(path, params)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// oddDirNames are state directory names whose characters mean something in a URI: before URI
// escaped the path, "work#routines" put the journal at "work" beside it, "a?b" at "a", and
// "100%41" at "100A".
var oddDirNames = []string{"work#routines", "a?b", "100%", "100%41", "with space", "日本語 é", "x?mode=ro#y", "semi;amp&eq=plus+"}

// TestOddDirectoryNamesKeepTheJournalInside opens, writes, reopens (writer and read-only) and
// reads the epoch of a journal in directories with those names: the file is always
// DIR/journal.db, and nothing appears beside DIR.
func TestOddDirectoryNamesKeepTheJournalInside(t *testing.T) {
	for _, name := range oddDirNames {
		if runtime.GOOS == "windows" && strings.ContainsAny(name, `?*:<>|"`) {
			continue // not a file name there (https://learn.microsoft.com/windows/win32/fileio/naming-a-file)
		}
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, name)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "journal.db")
			j, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.Acquire(7, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := j.RequestRun("r"); err != nil {
				t.Fatal(err)
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if j, err = Open(path); err != nil { // a journal that exists: checked, then opened
				t.Fatal(err)
			}
			_ = j.Close()
			ro, err := OpenReadOnly(path)
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := ro.PendingRequests()
			_ = ro.Close()
			if err != nil || len(reqs) != 1 {
				t.Fatalf("read-only: %d requests, %v; want the one written", len(reqs), err)
			}
			if e, err := MaxEpochOf(path); err != nil || e != 7 {
				t.Fatalf("MaxEpochOf = %d, %v; want 7", e, err)
			}
			assertOnly(t, parent, name)
			if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
				t.Fatalf("journal.db in %q: %v", dir, err)
			}
		})
	}
}

// assertOnly fails unless dir holds exactly the entries names.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		t.Fatalf("%s holds %q; want only %q (a file beside the state directory is the journal opened elsewhere)", dir, got, names)
	}
}

// TestOpenedRefusesAnotherFile: the check after opening refuses a database handle whose file is
// not the journal's path, whatever the reason.
func TestOpenedRefusesAnotherFile(t *testing.T) {
	dir := t.TempDir()
	other, path := filepath.Join(dir, "other.db"), filepath.Join(dir, "journal.db")
	for _, p := range []string{other, path} {
		if err := createPrivate(p); err != nil {
			t.Fatal(err)
		}
	}
	uri, err := URI(other, nil)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := opened(db, path); !errors.Is(err, ErrOpenedElsewhere) {
		t.Fatalf("opened(other.db as journal.db) = %v; want ErrOpenedElsewhere", err)
	}
	if _, err := opened(db, other); err != nil {
		t.Fatalf("opened(other.db) = %v", err)
	}
}
