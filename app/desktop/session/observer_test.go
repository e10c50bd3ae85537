package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/scheduler/journal"
)

// The observer's journal handle follows journal.db: after the file was deleted and put back
// (another file now, as the owner's Restore makes), the next action opens the file at the path,
// so a run-now request reaches the owner instead of the deleted file; while the path is empty,
// an action fails with ErrReplaced and makes no journal of its own.
func TestObserverReopensAJournalPutBack(t *testing.T) {
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	o := newObserver(p)
	defer o.close()
	first, err := o.journal()
	if err != nil {
		t.Fatal(err)
	}
	aside := p.Journal + ".aside"
	if err := os.Rename(p.Journal, aside); err != nil {
		t.Fatal(err)
	}
	if _, err := o.journal(); !errors.Is(err, journal.ErrReplaced) {
		t.Fatalf("journal while journal.db is gone: %v; want ErrReplaced", err)
	}
	if _, err := os.Lstat(p.Journal); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("journal.db after a look while it was gone: %v; want none made", err)
	}
	back, err := journal.Open(p.Journal) // the owner's put-back: a new file at the path
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = back.Close() }()
	j, err := o.journal()
	if err != nil || j == first {
		t.Fatalf("journal once journal.db is back: %p, %v; want a new handle (not %p)", j, err, first)
	}
	id, err := j.RequestRun("r")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := back.PendingRequests()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].ID != id {
		t.Errorf("requests in the journal at the path: %+v; want request %d", reqs, id)
	}
}
