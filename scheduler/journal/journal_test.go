package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func acquiredJournal(t testing.TB) *Journal {
	t.Helper()
	j, err := Open(filepath.Join(t.TempDir(), "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	if _, err := j.Acquire(1, time.Now()); err != nil {
		t.Fatal(err)
	}
	return j
}

func TestJournalWALAndSchemaVersion(t *testing.T) {
	j := acquiredJournal(t)
	var mode string
	var version int
	if err := j.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q %v", mode, err)
	}
	if err := j.db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != len(migrations) {
		t.Fatalf("user_version %d %v", version, err)
	}
	// Reopening an up-to-date journal applies nothing and keeps the data.
	if _, err := j.Claim(Claim{Routine: "a", Slot: time.Unix(100, 0), Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	j2, err := Open(j.path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if h, _ := j2.History("", 0); len(h) != 1 {
		t.Fatalf("history after reopen: %v", h)
	}
}

func TestRetentionKeepsNewestRuns(t *testing.T) {
	j := acquiredJournal(t)
	for i := range 30 {
		id, err := j.Claim(Claim{Routine: "a", Slot: time.Unix(int64(1000+i), 0), Trigger: TriggerSchedule, Outcome: OutcomeRunning})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(id, Result{Outcome: OutcomeSuccess, Finished: time.Now(), Output: []byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	j.PruneLater("a", 10)
	j.pruneWG.Wait()
	h, _ := j.History("a", 0)
	if len(h) != 10 || h[0].Slot.Unix() != 1029 || h[9].Slot.Unix() != 1020 {
		t.Fatalf("kept %d runs: first %v last %v", len(h), h[0].Slot, h[len(h)-1].Slot)
	}
	out, err := j.Output(h[0].ID)
	if err != nil || string(out) != "29" {
		t.Fatalf("output %q %v", out, err)
	}
	// The high-water mark survives pruning: an old slot cannot be claimed again.
	if _, err := j.Claim(Claim{Routine: "a", Slot: time.Unix(1005, 0), Trigger: TriggerSchedule, Outcome: OutcomeRunning}); err == nil {
		t.Fatal("pruned old slot was claimable again")
	}
}

func TestSnapshotStoreKeepsLastN(t *testing.T) {
	j := acquiredJournal(t)
	if _, ok, err := j.LastSnapshot("w"); ok || err != nil {
		t.Fatalf("empty store: ok=%v err=%v", ok, err)
	}
	for i := range 5 {
		if err := j.SaveSnapshot("w", fmt.Sprint("v", i), 3); err != nil {
			t.Fatal(err)
		}
	}
	text, ok, err := j.LastSnapshot("w")
	if err != nil || !ok || text != "v4" {
		t.Fatalf("last = %q %v %v", text, ok, err)
	}
	var n int
	_ = j.db.QueryRow(`SELECT COUNT(*) FROM snapshots WHERE routine = 'w'`).Scan(&n)
	if n != 3 {
		t.Fatalf("kept %d snapshots, want 3", n)
	}
}

func TestRequestLifecycle(t *testing.T) {
	j := acquiredJournal(t)
	id, err := j.RequestRun("a")
	if err != nil {
		t.Fatal(err)
	}
	if run, err := j.RequestResult(id); run != 0 || err != nil {
		t.Fatalf("pending: %d %v", run, err)
	}
	if _, err := j.RequestResult(id + 100); err == nil {
		t.Fatal("unknown request has a result")
	}
	if err := j.AnswerRequest(id, 0, "no routine"); err != nil {
		t.Fatal(err)
	}
	if _, err := j.RequestResult(id); err == nil {
		t.Fatal("refused request reports no error")
	}
}

// One group-commit batch decides each claim on its own: new ones get ids, a duplicate inside
// the batch, an already-claimed slot, one behind the high-water mark and a fenced one are
// refused with the right error.
func TestClaimBatchDecidesEachClaim(t *testing.T) {
	j := acquiredJournal(t)
	t0 := time.Unix(10_000, 0)
	if _, err := j.Claim(Claim{Routine: "old", Slot: t0, Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	mk := func(routine string, slot time.Time, epoch uint64) claimReq {
		return claimReq{c: Claim{Routine: routine, Slot: slot, Key: SlotKey(slot), Trigger: TriggerSchedule, Outcome: OutcomeRunning},
			epoch: epoch, resp: make(chan claimResp, 1)}
	}
	batch := []claimReq{
		mk("a", t0, 1),                     // new
		mk("b", t0, 1),                     // new
		mk("a", t0, 1),                     // duplicate inside the batch
		mk("old", t0, 1),                   // already claimed
		mk("old", t0.Add(-time.Minute), 1), // behind the high-water mark
	}
	j.commitBatch(batch, nil)
	want := []error{nil, nil, ErrSlotClaimed, ErrSlotClaimed, ErrSlotClaimed}
	for i, req := range batch {
		r := <-req.resp
		if (want[i] == nil) != (r.err == nil) || (want[i] != nil && !errors.Is(r.err, want[i])) || (want[i] == nil && r.id == 0) {
			t.Errorf("claim %d: id %d err %v, want %v", i, r.id, r.err, want[i])
		}
	}
	j2, err := Open(j.path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if _, err := j2.Acquire(2, time.Now()); err != nil {
		t.Fatal(err)
	}
	fenced := []claimReq{mk("c", t0, 1), mk("d", t0, 1)}
	j.commitBatch(fenced, nil)
	for i, req := range fenced {
		if r := <-req.resp; !errors.Is(r.err, ErrFenced) {
			t.Errorf("fenced claim %d: %v, want ErrFenced", i, r.err)
		}
	}
}

// Observers open the journal read-only: an absent journal is a clear error wrapping
// os.ErrNotExist and leaves no file behind; a present one reads while the owner writes, and
// refuses writes.
func TestOpenReadOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.db")
	if _, err := OpenReadOnly(path); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("absent journal: %v, want an error naming it and wrapping os.ErrNotExist", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("read-only open of an absent journal created %v", ents)
	}
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Acquire(1, time.Now()); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range 20 {
		if _, err := w.Claim(Claim{Routine: "a", Slot: time.Unix(int64(100+i), 0), Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.History("a", 0); err != nil {
			t.Fatalf("read beside the owner: %v", err)
		}
	}
	if h, _ := r.History("a", 0); len(h) != 20 {
		t.Fatalf("read-only history: %d runs", len(h))
	}
	if _, err := r.RequestRun("a"); err == nil {
		t.Fatal("a read-only journal accepted a write")
	}
}

// A journal whose owner has gone (WAL files checkpointed away) still opens read-only.
func TestOpenReadOnlyAfterOwnerClosed(t *testing.T) {
	j := acquiredJournal(t)
	if _, err := j.Claim(Claim{Routine: "a", Slot: time.Unix(100, 0), Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	r, err := OpenReadOnly(j.path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h, err := r.History("", 0); err != nil || len(h) != 1 {
		t.Fatalf("history %v %v", h, err)
	}
	if err := r.SetPaused("a", "", nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write through a read-only journal: %v, want ErrReadOnly", err)
	}
}
