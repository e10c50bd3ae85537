package journal

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// foreignDB creates an SQLite database of "another program" at path with setup, and returns
// its bytes.
func foreignDB(t *testing.T, path string, setup ...string) []byte {
	t.Helper()
	db, err := sql.Open("sqlite", uriT(t, path, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range setup {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A file at the journal's path that is not a Routinely journal is refused by the owner's open,
// by observers and by the epoch read, with what to do, and is left exactly as it was: no byte
// changed, no -wal or -shm file created beside it.
func TestNotAJournalIsRefusedAndKept(t *testing.T) {
	cases := map[string]func(t *testing.T, path string) []byte{
		"random bytes": func(t *testing.T, path string) []byte {
			data := bytes.Repeat([]byte("\x00\x17garbage, not SQLite\xff"), 300)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return data
		},
		"another program's database": func(t *testing.T, path string) []byte {
			return foreignDB(t, path, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`, `INSERT INTO notes (body) VALUES ('mine')`)
		},
		"a journal version without the journal's tables": func(t *testing.T, path string) []byte {
			return foreignDB(t, path, `CREATE TABLE runs (x)`, `PRAGMA user_version = 1`)
		},
		// Even a real journal is not opened through a link: nothing in the state directory is
		// followed. (want is the target's bytes: os.ReadFile below follows the link.)
		"a symbolic link to a journal": func(t *testing.T, path string) []byte {
			target := filepath.Join(t.TempDir(), "elsewhere.db")
			j, err := Open(target)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				// Wine 8.0's CreateSymbolicLinkW is a stub that reports success and creates
				// nothing (Lstat: "File not found"). Windows makes the link or fails (without the
				// symbolic-link privilege), and Unix makes it, so only Wine gets here.
				t.Skipf("os.Symlink reported success but made no link (%v): Wine's stub", err)
			}
			data, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			return data
		},
	}
	for name, make := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "journal.db")
			want := make(t, path)
			opens := map[string]func() error{
				"Open": func() error {
					j, err := Open(path)
					if err == nil {
						_ = j.Close()
					}
					return err
				},
				"OpenReadOnly": func() error {
					j, err := OpenReadOnly(path)
					if err == nil {
						_ = j.Close()
					}
					return err
				},
				"MaxEpochOf": func() error { _, err := MaxEpochOf(path); return err },
			}
			for what, open := range opens {
				err := open()
				if !errors.Is(err, ErrNotJournal) {
					t.Fatalf("%s: err %v, want ErrNotJournal", what, err)
				}
				for _, s := range []string{path, "Nothing was changed", "move it aside", "journal.db-wal"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%s: %q does not say %q", what, err, s)
					}
				}
				if IsUnavailable(err) {
					t.Errorf("%s: a file that is not a journal counts as unavailable for now: waiting would not help", what)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("the file changed (err %v): %d bytes, had %d", err, len(got), len(want))
			}
			for _, side := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Stat(path + side); err == nil {
					t.Errorf("%s created beside the refused file", path+side)
				}
			}
		})
	}
}

// A journal of a newer schema is refused with both versions named; an empty file or an empty
// database is a journal yet to be created.
func TestJournalVersions(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	foreignDB(t, newer, `PRAGMA user_version = 999`)
	if _, err := Open(newer); err == nil || !strings.Contains(err.Error(), "schema version 999 is newer") {
		t.Fatalf("newer schema: err %v", err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if e, err := MaxEpochOf(empty); err != nil || e != 0 {
		t.Fatalf("empty file: epoch %d, err %v; want 0, nil", e, err)
	}
	j, err := Open(empty)
	if err != nil {
		t.Fatalf("empty file: %v", err)
	}
	_ = j.Close()
	if e, err := MaxEpochOf(filepath.Join(dir, "missing.db")); err != nil || e != 0 {
		t.Fatalf("missing file: epoch %d, err %v; want 0, nil", e, err)
	}
}

// Another process holding the journal's write lock (BEGIN EXCLUSIVE, as `sqlite3` does) stops
// neither the open nor the epoch read of a journal at this program's version (so a standby
// can own); the first write then fails in a way IsUnavailable tells from a bad file.
func TestLockedJournalOpensAndReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j := mustOpen(t, path)
	if _, err := j.Acquire(7, time.Now()); err != nil {
		t.Fatal(err)
	}
	_ = j.Close()

	other, err := sql.Open("sqlite", uriT(t, path, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK") }()

	if e, err := MaxEpochOf(path); err != nil || e != 7 {
		t.Fatalf("epoch while locked: %d, %v; want 7", e, err)
	}
	j, err = OpenBusy(path, 100*time.Millisecond)
	if err != nil {
		t.Fatalf("open while locked: %v", err)
	}
	defer func() { _ = j.Close() }()
	_, err = j.Acquire(8, time.Now())
	if err == nil || !IsUnavailable(err) {
		t.Fatalf("write while locked: err %v, want one IsUnavailable accepts", err)
	}
}

func mustOpen(t *testing.T, path string) *Journal {
	t.Helper()
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// A look at a journal that another opener is creating at that moment (the owner and the app's
// observer both open a new profile's journal at start) never mistakes it for another program's
// database: the version and the tables are read from one snapshot. Each round, a reader checks
// a new journal's path over and over while Open creates it; before the fix a check that read
// user_version 0 before the creating migration committed and the table list after it refused
// the journal as "an SQLite database of another program" in most runs of this test.
func TestALookDuringTheJournalsCreationIsNotARefusal(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 40; round++ {
		path := filepath.Join(dir, fmt.Sprintf("journal-%d.db", round))
		stop, done := make(chan struct{}), make(chan error, 1)
		go func() {
			for looks := 0; ; looks++ {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				if _, err := checkJournalFile(path, 5*time.Second); errors.Is(err, ErrNotJournal) {
					done <- fmt.Errorf("look %d: %w", looks, err)
					return
				}
			}
		}()
		j, err := Open(path)
		if err == nil {
			err = j.Close()
		}
		close(stop)
		if lookErr := <-done; lookErr != nil {
			t.Fatalf("round %d: a look while the journal was created: %v", round, lookErr)
		}
		if err != nil {
			t.Fatalf("round %d: open: %v", round, err)
		}
	}
}
