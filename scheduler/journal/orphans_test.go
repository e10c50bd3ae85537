package journal

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/routinely/routinely/ownership"
)

// A journal written before runs recorded their processes (schema 1) is migrated in place: a run
// its owner left running is an orphan with no recorded process, and the journal gets an id of
// its own that the runs' tokens carry.
func TestMigratedJournalKeepsItsOrphans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	db, err := sql.Open("sqlite", uriT(t, path, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(migrations[0] + `; PRAGMA user_version = 1;
		INSERT INTO epochs VALUES (1, 0);
		INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome, started)
			VALUES ('backup', 'k', 0, 'schedule', 1, 'running', 0)`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if n, err := j.Acquire(2, time.Now()); err != nil || n != 1 {
		t.Fatalf("acquire: %d orphans, %v", n, err)
	}
	o, err := j.Orphans()
	if err != nil || len(o) != 1 || o[0].Routine != "backup" || o[0].Leader != (ownership.ProcessIdentity{}) {
		t.Fatalf("orphans %+v, %v", o, err)
	}
	if len(j.id) != 32 || o[0].Token != j.id+"-1" {
		t.Fatalf("journal id %q, token %q", j.id, o[0].Token)
	}
	j2, err := Open(path) // the id is made once, by the migration
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if j2.id != j.id {
		t.Fatalf("journal id changed on reopening: %q, then %q", j.id, j2.id)
	}
	// The run is recorded only once the new owner has dealt with its processes, and only once.
	if err := j.CloseOrphan(o[0].ID, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if left, _ := j.Orphans(); len(left) != 0 {
		t.Fatalf("orphans after recording: %+v", left)
	}
	if r, _ := j.Run(o[0].ID); r.Outcome != OutcomeInterrupted || r.Reason != "test" || r.Finished == nil {
		t.Fatalf("recorded %+v", r)
	}
}
