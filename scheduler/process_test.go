//go:build !windows

package scheduler

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// writeDir writes routines.toml into a fresh directory for child processes.
func writeDir(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "routines.toml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func openJournal(t *testing.T, dir string) *journal.Journal {
	t.Helper()
	j, err := journal.Open(filepath.Join(dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// Killing the owner between claim and completion leaves that slot `interrupted` and
// it never runs again. The owner is a real process (this test binary) killed with SIGKILL.
func TestKillBetweenClaimAndCompletion(t *testing.T) {
	dir := writeDir(t, "[[routine]]\nname = \"tick\"\nevery = \"1s\"\nrun = [\"/bin/true\"]\n")
	j := openJournal(t, dir)
	child := startChild(t, "owner-block", dir, "ROUTINELY_TEST_EPOCH=1")
	var claimed journal.Run
	eventually(t, "a claimed running slot", func() bool {
		runs, _ := j.History("tick", 0)
		for _, r := range runs {
			if r.Outcome == journal.OutcomeRunning {
				claimed = r
				return true
			}
		}
		return false
	})
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	// The next owner (epoch 2, a second real process) acquires and runs for a while.
	next := startChild(t, "owner-fast", dir, "ROUTINELY_TEST_EPOCH=2")
	eventually(t, "the next owner runs", func() bool {
		runs, _ := j.History("tick", 0)
		return countOutcome(runs, journal.OutcomeSuccess) >= 2
	})
	_ = next.Process.Signal(syscall.SIGTERM)
	_ = next.Wait()

	r, err := j.Run(claimed.ID)
	if err != nil || r.Outcome != journal.OutcomeInterrupted || r.Epoch != 1 {
		t.Fatalf("claimed run after the kill: %+v %v", r, err)
	}
	runs, _ := j.History("tick", 0)
	seen := map[int64]int{}
	for _, x := range runs {
		seen[x.Slot.UnixNano()]++
		if x.Slot.Equal(claimed.Slot) && x.ID != claimed.ID {
			t.Fatalf("interrupted slot %s ran again as run %d (%s)", x.Slot, x.ID, x.Outcome)
		}
	}
	for slot, n := range seen {
		if n > 1 {
			t.Fatalf("slot %s has %d rows", time.Unix(0, slot), n)
		}
	}
	if _, err := j.Acquire(3, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Claim(journal.Claim{Routine: "tick", Slot: claimed.Slot, Trigger: journal.TriggerCatchUp, Outcome: journal.OutcomeRunning}); !errors.Is(err, journal.ErrSlotClaimed) {
		t.Fatalf("re-claiming the interrupted slot: %v, want ErrSlotClaimed", err)
	}
}

// Two owners in sequence over the same journal never claim the same slot, and the
// second one records the slots that passed between them instead of dropping them.
func TestTwoOwnersInSequenceNeverClaimTheSameSlot(t *testing.T) {
	dir := writeDir(t, "[[routine]]\nname = \"tick\"\nevery = \"1s\"\nrun = [\"/bin/true\"]\n")
	j := openJournal(t, dir)
	for epoch := 1; epoch <= 2; epoch++ {
		c := startChild(t, "owner-fast", dir, "ROUTINELY_TEST_EPOCH="+strconv.Itoa(epoch))
		eventually(t, "runs", func() bool {
			runs, _ := j.History("tick", 0)
			n := 0
			for _, r := range runs {
				if r.Epoch == uint64(epoch) && r.Outcome == journal.OutcomeSuccess {
					n++
				}
			}
			return n >= 2
		})
		_ = c.Process.Signal(syscall.SIGTERM)
		_ = c.Wait()
		time.Sleep(1500 * time.Millisecond) // slots pass with no owner
	}
	runs, _ := j.History("tick", 0)
	seen := map[int64]bool{}
	for _, r := range runs {
		if seen[r.Slot.UnixNano()] {
			t.Fatalf("slot %s claimed twice", r.Slot)
		}
		seen[r.Slot.UnixNano()] = true
	}
	if countOutcome(runs, journal.OutcomeMissed)+countOutcome(runs, journal.OutcomeSuccess) < 4 {
		t.Fatalf("runs: %+v", runs)
	}
}

// An `every = "1s"` routine in a process SIGSTOPped for 5 s runs at most twice in the
// second after SIGCONT (the stopped slots are recorded missed, not burst).
func TestStoppedProcessDoesNotBurst(t *testing.T) {
	dir := writeDir(t, "[[routine]]\nname = \"tick\"\nevery = \"1s\"\nrun = [\"/bin/true\"]\n")
	j := openJournal(t, dir)
	c := startChild(t, "owner-fast", dir, "ROUTINELY_TEST_EPOCH=1")
	eventually(t, "first runs", func() bool {
		runs, _ := j.History("tick", 0)
		return countOutcome(runs, journal.OutcomeSuccess) >= 2
	})
	if err := c.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	cont := time.Now()
	if err := c.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	_ = c.Process.Signal(syscall.SIGTERM)
	_ = c.Wait()
	runs, _ := j.History("tick", 0)
	inSecond := 0
	for _, r := range runs {
		if r.Outcome == journal.OutcomeSuccess && r.Started != nil && !r.Started.Before(cont) && r.Started.Before(cont.Add(time.Second)) {
			inSecond++
		}
	}
	if inSecond > 2 {
		t.Fatalf("%d runs in the second after SIGCONT, want at most 2", inSecond)
	}
	if countOutcome(runs, journal.OutcomeMissed) < 3 {
		t.Fatalf("stopped slots not recorded missed: %d missed", countOutcome(runs, journal.OutcomeMissed))
	}
}

// Run-now from another process while a daemon owns gives exactly one run, in the
// owner, with trigger manual.
func TestRunNowFromAnotherProcess(t *testing.T) {
	dir := writeDir(t, "[[routine]]\nname = \"brief\"\ncron = \"0 0 1 1 *\"\nrun = [\"/bin/true\"]\n")
	j := openJournal(t, dir)
	owner := startChild(t, "owner-fast", dir, "ROUTINELY_TEST_EPOCH=1")
	eventually(t, "owner epoch recorded", func() bool { e, _ := j.MaxEpoch(); return e == 1 })
	req := startChildOutput(t, "request", dir, "ROUTINELY_TEST_ROUTINE=brief")
	runID, err := strconv.ParseInt(strings.TrimSpace(req), 10, 64)
	if err != nil {
		t.Fatalf("request output %q: %v", req, err)
	}
	eventually(t, "manual run recorded", func() bool { r, _ := j.Run(runID); return r.Outcome == journal.OutcomeSuccess })
	_ = owner.Process.Signal(syscall.SIGTERM)
	_ = owner.Wait()
	runs, _ := j.History("brief", 0)
	if len(runs) != 1 || runs[0].Trigger != journal.TriggerManual || runs[0].Epoch != 1 || runs[0].ID != runID {
		t.Fatalf("runs: %+v", runs)
	}
	if _, err := j.RequestRun("nope"); err != nil {
		t.Fatal(err)
	}
}

// startChildOutput runs a child role to completion and returns its stdout.
func startChildOutput(t *testing.T, role, dir string, env ...string) string {
	t.Helper()
	out, err := childCmd(role, dir, env...).Output()
	if err != nil {
		t.Fatalf("child %s: %v", role, err)
	}
	return string(out)
}

// An observer process reading the journal read-only while the owner claims and records runs as
// fast as it can: neither side sees SQLITE_BUSY (WAL readers never block the writer).
func TestReaderProcessBesideWritingOwner(t *testing.T) {
	dir := writeDir(t, "")
	j := openJournal(t, dir)
	if _, err := j.Acquire(1, time.Now()); err != nil {
		t.Fatal(err)
	}
	reader := childCmd("reader", dir)
	var out strings.Builder
	reader.Stdout = &out
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1_700_000_000, 0)
	writes := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); writes++ {
		id, err := j.Claim(journal.Claim{Routine: "r", Slot: base.Add(time.Duration(writes) * time.Second), Trigger: journal.TriggerSchedule,
			Outcome: journal.OutcomeRunning, Started: time.Now()})
		if err != nil {
			t.Fatalf("claim %d beside a reader: %v", writes, err)
		}
		if err := j.Finish(id, journal.Result{Outcome: journal.OutcomeSuccess, Finished: time.Now(), Output: []byte("ok")}); err != nil {
			t.Fatalf("finish %d beside a reader: %v", writes, err)
		}
	}
	if err := reader.Wait(); err != nil {
		t.Fatalf("reader process: %v (read %s times)", err, strings.TrimSpace(out.String()))
	}
	if out.Len() == 0 || writes < 10 {
		t.Fatalf("reader read %q times, owner wrote %d", out.String(), writes)
	}
}
