//go:build unix

package e2e

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// journalGone: `tick` shows every slot is accounted for; `long` keeps a run in flight, so the
// owner has runs to wait for before it puts the journal back (status says journal-replaced
// meanwhile, seconds rather than a moment).
const journalGone = `
[[routine]]
name = "tick"
every = "1s"
shell = 'true'
timeout = "5s"

[[routine]]
name = "long"
every = "1s"
shell = 'sleep 6'
timeout = "30s"
`

// routineHistory returns routine's runs, newest first, with the fields these tests read.
func routineHistory(t *testing.T, home, routine string) []histRow {
	t.Helper()
	stdout, stderr, code := run(t, home, "history", routine, "--json", "--limit", "100000")
	var rows []histRow
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || code != 0 {
		t.Fatalf("history %s --json: exit %d, %v\n%s%s", routine, code, err, stdout, stderr)
	}
	return rows
}

// Deleting journal.db (with its -wal and -shm) while the daemon owns: before, the owner went on
// writing to the deleted file, status said healthy, history said "No runs yet", and every run
// after the deletion was gone once the owner stopped. Now status says journal-replaced (exit 4)
// within a few heartbeats, the owner waits for its run in flight, puts the journal it had open
// back, and runs again; afterwards the history holds the runs from before the deletion, the run
// that was in flight, and exactly one record for every slot of `tick` since it first ran.
func TestDeletedJournalIsNoticedAndPutBack(t *testing.T) {
	t.Parallel()
	home := newHome(t, journalGone)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	waitSuccesses(t, home, 2, time.Time{})
	// Delete while `long` has just started a run: it is still in flight when the owner notices.
	inFlight := waitFreshRun(t, home, "long")
	before := len(routineHistory(t, home, "tick"))
	journal := filepath.Join(home, "journal.db")
	for _, f := range []string{journal, journal + "-wal", journal + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	deletedAt := time.Now()

	s := waitStatus(t, home, "journal-replaced (exit 4) after journal.db was deleted", func(s statusOut) bool {
		return hasDiagnosis(s, "journal-replaced")
	})
	if s.ExitCode != 4 || s.Health != "unhealthy" {
		t.Errorf("journal-replaced with health %s, exit %d; want unhealthy, 4", s.Health, s.ExitCode)
	}
	if took := time.Since(deletedAt); took > 3*2*time.Second+time.Second {
		t.Errorf("journal-replaced %s after the deletion; want within 3 heartbeats (2 s each)", took.Round(time.Millisecond))
	}
	for _, dg := range s.Diagnoses {
		if dg.Kind == "journal-replaced" && !strings.Contains(dg.Message, "journal.db") {
			t.Errorf("journal-replaced says %q: want what happened to journal.db", dg.Message)
		}
	}
	// A request made meanwhile never makes a journal of its own (it would meet the deleted one's
	// -wal, and the owner would refuse it as another file): it waits for the journal to be back,
	// or says to try again.
	// (A journal made by the request would keep the owner from putting its own back: the wait
	// for healthy below would time out.)
	if _, stderr, code := run(t, home, "pause", "long"); code != 0 && (code != 75 || !strings.Contains(stderr, "missing while")) {
		t.Errorf("pause while journal.db is gone: exit %d, stderr:\n%s\nwant 75 saying it is missing, or 0 once it is back", code, stderr)
	}
	waitStatus(t, home, "healthy once the journal is back", func(s statusOut) bool { return s.ExitCode == 0 })
	backAt := time.Now()
	t.Logf("journal-replaced %s after the deletion; healthy again after %s", s.Diagnoses, backAt.Sub(deletedAt).Round(time.Millisecond))
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("journal.db after the owner says healthy: %v", err)
	}
	waitSuccesses(t, home, 1, backAt.Add(time.Second))

	d.signal(syscall.SIGTERM)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon: exit %d on SIGTERM", code)
	}
	if !strings.Contains(d.stderr.String(), "journal.db put back") {
		t.Errorf("the daemon's log does not say the journal was put back")
	}

	ticks := routineHistory(t, home, "tick")
	if len(ticks) < before {
		t.Fatalf("tick has %d records after the journal came back, %d before the deletion: the history was lost", len(ticks), before)
	}
	checkEverySlotOnce(t, ticks, deletedAt, backAt)
	for _, r := range routineHistory(t, home, "long") {
		if r.Slot.Equal(inFlight) {
			if r.Outcome != "success" {
				t.Errorf("long's run in flight at the deletion (slot %s): %s (%s); want success", inFlight.Format(time.TimeOnly), r.Outcome, r.Reason)
			}
			return
		}
	}
	t.Errorf("long's run in flight at the deletion (slot %s) is not in the history", inFlight.Format(time.TimeOnly))
}

// checkEverySlotOnce checks the rows of an `every = "1s"` routine: exactly one record for every
// slot from its first to its last, each a success or missed, and at least one of them between
// from and to (when nothing ran).
func checkEverySlotOnce(t *testing.T, rows []histRow, from, to time.Time) {
	t.Helper()
	bySlot := map[time.Time]int{}
	first, last := rows[0].Slot, rows[0].Slot
	between := 0
	for _, r := range rows {
		sl := r.Slot.UTC()
		bySlot[sl]++
		first, last = minTime(first, sl), maxTime(last, sl)
		if r.Outcome != "success" && r.Outcome != "missed" {
			t.Errorf("slot %s: %s (%s); want success or missed", sl.Format(time.TimeOnly), r.Outcome, r.Reason)
		}
		if !sl.Before(from.Truncate(time.Second)) && sl.Before(to) {
			between++
		}
	}
	for sl := first.UTC(); !sl.After(last); sl = sl.Add(time.Second) {
		switch n := bySlot[sl]; {
		case n == 0:
			t.Errorf("slot %s has no record: a run lost without a word", sl.Format(time.TimeOnly))
		case n > 1:
			t.Errorf("slot %s has %d records", sl.Format(time.TimeOnly), n)
		}
	}
	if between == 0 {
		t.Errorf("no slot between %s and %s is recorded: %+v", from.Format(time.TimeOnly), to.Format(time.TimeOnly), rows)
	}
}

// journal.db replaced by another file (renamed over it) while the daemon owns: that file is left
// alone and nothing runs (journal-replaced, exit 4, for as long as it is there); once it is moved
// away the owner puts its journal back, and every slot of the outage is recorded.
func TestReplacedJournalIsLeftAloneUntilMovedAway(t *testing.T) {
	t.Parallel()
	home := newHome(t, everySecond)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	waitSuccesses(t, home, 2, time.Time{})
	journal := filepath.Join(home, "journal.db")
	other := filepath.Join(home, "other")
	if err := os.WriteFile(other, []byte("someone's file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, journal); err != nil {
		t.Fatal(err)
	}
	replacedAt := time.Now()
	s := waitStatus(t, home, "journal-replaced (exit 4) after journal.db was replaced", func(s statusOut) bool {
		return hasDiagnosis(s, "journal-replaced")
	})
	if s.ExitCode != 4 {
		t.Errorf("journal-replaced with exit %d; want 4", s.ExitCode)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		if s := status(t, home); !hasDiagnosis(s, "journal-replaced") || s.ExitCode != 4 {
			t.Fatalf("status while another file is at journal.db: exit %d, %+v; want journal-replaced, exit 4", s.ExitCode, s.Diagnoses)
		}
	}
	if b, err := os.ReadFile(journal); err != nil || string(b) != "someone's file\n" {
		t.Fatalf("the file put at journal.db: %q, %v; want it left as it was", b, err)
	}
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, home, "healthy once the other file is gone", func(s statusOut) bool { return s.ExitCode == 0 })
	backAt := time.Now()
	waitSuccesses(t, home, 1, backAt.Add(time.Second))
	d.signal(syscall.SIGTERM)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon: exit %d on SIGTERM", code)
	}
	checkEverySlotOnce(t, routineHistory(t, home, "tick"), replacedAt, backAt)
}

// waitFreshRun waits until routine's newest run is running and began less than 1.5 s ago, and
// returns its slot.
func waitFreshRun(t *testing.T, home, routine string) time.Time {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for {
		rows := routineHistory(t, home, routine)
		if len(rows) > 0 && rows[0].Outcome == "running" && time.Since(rows[0].Slot) < 1500*time.Millisecond {
			return rows[0].Slot
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run of %s started within %s: %+v", routine, ownDeadline, rows)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A takeover approved while the owner's journal.db is deleted waits until the owner has put it
// back: handing over at once would have the successor start an empty journal at the path while
// the only copy of the history is in the old owner's open file. The successor owns once the
// journal is back, and reads the history from before the deletion.
func TestTakeoverWaitsForTheJournalToBePutBack(t *testing.T) {
	t.Parallel()
	home := newHome(t, journalGone)
	a := start(t, home, "daemon")
	waitOwner(t, home, a.pid())
	waitSuccesses(t, home, 2, time.Time{})
	inFlight := waitFreshRun(t, home, "long")
	before := len(routineHistory(t, home, "tick"))
	journal := filepath.Join(home, "journal.db")
	for _, f := range []string{journal, journal + "-wal", journal + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	deletedAt := time.Now()
	waitStatus(t, home, "journal-replaced", func(s statusOut) bool { return hasDiagnosis(s, "journal-replaced") })
	b := start(t, home, "daemon", "--takeover", "--timeout", "40s")
	waitOwner(t, home, b.pid())
	ownedAt := time.Now()
	if code := a.wait(cmdTimeout); code != 0 {
		t.Fatalf("the first daemon: exit %d after the takeover", code)
	}
	if !strings.Contains(a.stderr.String(), "journal.db put back") {
		t.Errorf("the first daemon handed over without putting the journal back")
	}
	waitSuccesses(t, home, 1, ownedAt.Add(time.Second))
	b.signal(syscall.SIGTERM)
	if code := b.wait(cmdTimeout); code != 0 {
		t.Fatalf("the second daemon: exit %d on SIGTERM", code)
	}
	ticks := routineHistory(t, home, "tick")
	if len(ticks) < before {
		t.Fatalf("tick has %d records after the takeover, %d before the deletion: the successor started an empty journal", len(ticks), before)
	}
	checkEverySlotOnce(t, ticks, deletedAt, ownedAt)
	for _, r := range routineHistory(t, home, "long") {
		if r.Slot.Equal(inFlight) {
			if r.Outcome != "success" {
				t.Errorf("long's run in flight at the deletion: %s (%s); want success", r.Outcome, r.Reason)
			}
			return
		}
	}
	t.Errorf("long's run in flight at the deletion (slot %s) is not in the history", inFlight.Format(time.TimeOnly))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// An owner killed after its put-back copy of a deleted journal was whole, before linking it into
// place, leaves journal.db missing and journal.db.restored beside it: the next owner adopts the
// copy, so the history (and the claims that keep a slot from running twice) carry on, rather
// than starting an empty journal.
func TestNextOwnerAdoptsAPutBackCopy(t *testing.T) {
	t.Parallel()
	home := newHome(t, journalGone)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	waitSuccesses(t, home, 2, time.Time{})
	// The copy is whole and has no log of its own (VACUUM INTO): a stopped owner's journal,
	// checkpointed by its close, stands in for it. A -wal left at the path is the deleted
	// file's, which the adoption must remove, never replay into the copy.
	d.signal(syscall.SIGTERM)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon: exit %d on SIGTERM", code)
	}
	before := len(routineHistory(t, home, "tick"))
	journal := filepath.Join(home, "journal.db")
	if err := os.Rename(journal, journal+".restored"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journal+"-wal", []byte("the deleted journal's log"), 0o600); err != nil {
		t.Fatal(err)
	}

	d = start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	if after := len(routineHistory(t, home, "tick")); after < before {
		t.Errorf("tick has %d records after the next owner started, %d before: the put-back copy was not adopted", after, before)
	}
	if _, err := os.Lstat(journal + ".restored"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("journal.db.restored after the next owner started: %v; want it adopted", err)
	}
	d.signal(syscall.SIGTERM)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon: exit %d on SIGTERM", code)
	}
	if !strings.Contains(d.stderr.String(), "put back from the copy an earlier owner made") {
		t.Errorf("the daemon's log does not say it adopted the copy:\n%s", d.stderr.String())
	}
}
