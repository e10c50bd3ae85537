//go:build unix

package journal

// Unix only: Windows does not let an open file be deleted or renamed over.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Intact tells the journal's file at its path from a path that is empty or holds another file,
// and a run's claim is refused meanwhile (a record of a slot that does not run is not).
func TestIntactAndClaimsWhileTheFileIsGone(t *testing.T) {
	j := acquiredJournal(t)
	if err := j.Intact(); err != nil {
		t.Fatalf("fresh journal: %v", err)
	}
	aside := j.path + ".aside"
	if err := os.Rename(j.path, aside); err != nil {
		t.Fatal(err)
	}
	if err := j.Intact(); !errors.Is(err, ErrReplaced) {
		t.Fatalf("path empty: Intact = %v; want ErrReplaced", err)
	}
	if _, err := j.Claim(Claim{Routine: "r", Slot: time.Unix(100, 0), Trigger: TriggerSchedule, Outcome: OutcomeRunning}); !errors.Is(err, ErrReplaced) {
		t.Fatalf("run's claim while journal.db is gone: %v; want ErrReplaced", err)
	}
	if _, err := j.Claim(Claim{Routine: "r", Slot: time.Unix(100, 0), Trigger: TriggerSchedule, Outcome: OutcomeMissed}); err != nil {
		t.Fatalf("a missed slot's record while journal.db is gone: %v; want it written to the open file", err)
	}
	if err := os.WriteFile(j.path, []byte("another file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := j.Intact(); !errors.Is(err, ErrReplaced) {
		t.Fatalf("another file at the path: Intact = %v; want ErrReplaced", err)
	}
	if err := os.Rename(aside, j.path); err != nil {
		t.Fatal(err)
	}
	if err := j.Intact(); err != nil {
		t.Fatalf("the file moved back: %v", err)
	}
}

// Restore puts the open journal back when journal.db, its -wal and -shm were deleted: the
// history from before and what was recorded while the path was empty are there, the file is
// private, and nothing else is left in the directory. While another file is at the path it
// changes nothing and keeps the journal open, so it can be tried again.
func TestRestorePutsTheOpenJournalBack(t *testing.T) {
	j := acquiredJournal(t)
	dir := filepath.Dir(j.path)
	if _, err := j.Claim(Claim{Routine: "r", Slot: time.Unix(100, 0), Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{j.path, j.path + "-wal", j.path + "-shm"} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := j.Claim(Claim{Routine: "r", Slot: time.Unix(101, 0), Trigger: TriggerSchedule, Outcome: OutcomeMissed}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j.path, []byte("another file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := j.Restore(); !errors.Is(err, ErrReplaced) {
		t.Fatalf("Restore with another file at the path = %v; want ErrReplaced", err)
	}
	if b, _ := os.ReadFile(j.path); string(b) != "another file" {
		t.Fatalf("Restore changed the other file: %q", b)
	}
	if _, err := j.Claim(Claim{Routine: "r", Slot: time.Unix(102, 0), Trigger: TriggerSchedule, Outcome: OutcomeMissed}); err != nil {
		t.Fatalf("the journal after a refused Restore: %v; want it still open", err)
	}
	if err := os.Remove(j.path); err != nil {
		t.Fatal(err)
	}
	if err := j.Restore(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(j.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("restored journal mode %v; want 0600", fi.Mode().Perm())
	}
	assertOnly(t, dir, "journal.db")
	back, err := Open(j.path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = back.Close() }()
	if e, err := back.MaxEpoch(); err != nil || e != 1 {
		t.Fatalf("restored epoch %d, %v; want 1", e, err)
	}
	last, err := back.LastSlots()
	if err != nil || !last["r"].Equal(time.Unix(102, 0)) {
		t.Fatalf("restored last slot %v, %v; want the slot recorded while journal.db was gone", last, err)
	}
	if _, err := back.Acquire(1, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := back.Claim(Claim{Routine: "r", Slot: time.Unix(100, 0), Trigger: TriggerSchedule, Outcome: OutcomeRunning}); !errors.Is(err, ErrSlotClaimed) {
		t.Fatalf("a slot that ran before the deletion claimed again: %v; want ErrSlotClaimed", err)
	}
}

// A journal moved away and back before Restore is left in place: Restore only closes it.
func TestRestoreOfAJournalMovedBack(t *testing.T) {
	j := acquiredJournal(t)
	if _, err := j.Claim(Claim{Routine: "r", Slot: time.Unix(100, 0), Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	aside := j.path + ".aside"
	if err := os.Rename(j.path, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, j.path); err != nil {
		t.Fatal(err)
	}
	if err := j.Restore(); err != nil {
		t.Fatalf("Restore of a journal moved back: %v", err)
	}
	assertOnly(t, filepath.Dir(j.path), "journal.db")
	ro, err := OpenReadOnly(j.path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ro.Close() }()
	if last, err := ro.LastSlots(); err != nil || !last["r"].Equal(time.Unix(100, 0)) {
		t.Fatalf("the journal after Restore: last slots %v, %v", last, err)
	}
}

// A process that does not own and kept its handle across a deletion of journal.db (the
// desktop's observer) gets ErrReplaced for a run-now request, a pause and a resume, rather than
// writing them into the deleted file where the owner never sees them; the owner's own handle
// writes on (its file is put back).
func TestRequestsRefusedWhileTheFileIsGone(t *testing.T) {
	owner := acquiredJournal(t)
	requester, err := Open(owner.path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = requester.Close() }()
	aside := owner.path + ".aside"
	if err := os.Rename(owner.path, aside); err != nil {
		t.Fatal(err)
	}
	if _, err := requester.RequestRun("r"); !errors.Is(err, ErrReplaced) {
		t.Errorf("RequestRun while journal.db is gone: %v; want ErrReplaced", err)
	}
	if err := requester.SetPaused("r", "", nil); !errors.Is(err, ErrReplaced) {
		t.Errorf("SetPaused while journal.db is gone: %v; want ErrReplaced", err)
	}
	if err := requester.Resume("r"); !errors.Is(err, ErrReplaced) {
		t.Errorf("Resume while journal.db is gone: %v; want ErrReplaced", err)
	}
	if err := owner.SetPaused("r", "auto-paused", nil); err != nil {
		t.Errorf("the owner's own pause while journal.db is gone: %v; want it written to the open file", err)
	}
	if err := os.Rename(aside, owner.path); err != nil {
		t.Fatal(err)
	}
	if _, err := requester.RequestRun("r"); err != nil {
		t.Errorf("RequestRun once the file is back: %v", err)
	}
}

// An owner killed after its put-back copy was whole but before it was linked into place leaves
// journal.db missing and journal.db.restored beside it (with the deleted file's -wal at the
// path): the next owner adopts the copy, history and claims kept, the stale -wal gone. A kill
// after the link leaves two names of one file: the copy's is removed. A journal made since is
// left alone, and so is the copy (ErrRestoredBeside).
func TestAdoptRestoredFinishesAPutBack(t *testing.T) {
	j := acquiredJournal(t)
	path := j.path
	slot := time.Unix(100, 0)
	if _, err := j.Claim(Claim{Routine: "r", Slot: slot, Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+RestoredSuffix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", []byte("the deleted file's log"), 0o600); err != nil {
		t.Fatal(err)
	}
	if adopted, err := AdoptRestored(path); !adopted || err != nil {
		t.Fatalf("AdoptRestored = %v, %v; want the copy linked into place", adopted, err)
	}
	for _, gone := range []string{path + RestoredSuffix, path + "-wal"} {
		if _, err := os.Lstat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after adoption: %v; want it gone", filepath.Base(gone), err)
		}
	}
	back, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := back.History("r", 10)
	if err != nil || len(runs) != 1 || !runs[0].Slot.Equal(slot) {
		t.Errorf("history after adoption: %+v, %v; want the run of slot %s", runs, err, slot)
	}
	_ = back.Close()

	// A kill after the link: two names of one file.
	if err := os.Link(path, path+RestoredSuffix); err != nil {
		t.Fatal(err)
	}
	if adopted, err := AdoptRestored(path); adopted || err != nil {
		t.Fatalf("AdoptRestored with the copy in place = %v, %v; want false, nil", adopted, err)
	}
	if _, err := os.Lstat(path + RestoredSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the copy's second name after adoption: %v; want it removed", err)
	}

	// A journal made since: both left as they are.
	if err := os.Rename(path, path+RestoredSuffix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("made since"), 0o600); err != nil {
		t.Fatal(err)
	}
	if adopted, err := AdoptRestored(path); adopted || !errors.Is(err, ErrRestoredBeside) {
		t.Fatalf("AdoptRestored beside a journal made since = %v, %v; want ErrRestoredBeside", adopted, err)
	}
	for _, kept := range []string{path, path + RestoredSuffix} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s: %v; want it kept", filepath.Base(kept), err)
		}
	}
}
