//go:build unix

package journal

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO at the journal's path is refused at once: SQLite's first read of it would block the
// owner forever.
func TestJournalFIFOIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrNotJournal) {
		t.Fatalf("Open: %v, want ErrNotJournal", err)
	}
	if _, err := OpenReadOnly(path); !errors.Is(err, ErrNotJournal) {
		t.Fatalf("OpenReadOnly: %v, want ErrNotJournal", err)
	}
	if _, err := MaxEpochOf(path); !errors.Is(err, ErrNotJournal) {
		t.Fatalf("MaxEpochOf: %v, want ErrNotJournal", err)
	}
}
