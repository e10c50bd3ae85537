//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// A state directory whose name holds characters a URI reads as its own ('#', '?', '%'), spaces
// or non-ASCII letters keeps its journal inside: the daemon runs a routine, `history` reads the
// run back, journal.db is in the directory, and nothing appears beside it. Before the journal's
// path was escaped, `--home "<tmp>/work#routines"` put the journal at "<tmp>/work" (0644, outside
// the private directory), and status and history read that file too, so nothing looked wrong.
func TestHomeWithURICharactersKeepsTheJournalInside(t *testing.T) {
	for _, name := range []string{"work#routines", "work?mode=ro", "100%41", "my routines", "rutinas ñ 日本"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			home := filepath.Join(parent, name)
			if err := os.Mkdir(home, 0o700); err != nil {
				t.Fatal(err)
			}
			writeConfig(t, home, everySecond)
			d := start(t, home, "daemon")
			waitOwner(t, home, d.pid())
			waitSuccesses(t, home, 1, time.Time{})
			d.signal(syscall.SIGTERM)
			if code := d.wait(cmdTimeout); code != 0 {
				t.Fatalf("daemon: exit %d on SIGTERM", code)
			}
			if n := successes(history(t, home), time.Time{}); n < 1 {
				t.Fatalf("history after the daemon stopped: %d successful runs, want at least 1", n)
			}
			if fi, err := os.Stat(filepath.Join(home, "journal.db")); err != nil || fi.Size() == 0 {
				t.Fatalf("journal.db in %q: %v", home, err)
			}
			ents, err := os.ReadDir(parent)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			if !slices.Equal(got, []string{name}) {
				t.Fatalf("%s holds %q; want only %q: the journal was opened outside the state directory", parent, got, name)
			}
		})
	}
}
