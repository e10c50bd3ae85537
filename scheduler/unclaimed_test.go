package scheduler

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// journalReports records what the engine told EngineOptions.OnJournal.
type journalReports struct {
	mu    sync.Mutex
	calls []journalReport
}

type journalReport struct {
	since time.Time
	err   error
}

func (r *journalReports) note(since time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, journalReport{since, err})
}

// last returns the latest report (zero before any).
func (r *journalReports) last() journalReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		return journalReport{}
	}
	return r.calls[len(r.calls)-1]
}

// lockedJournalHarness is an engine over a journal whose busy timeout is busy, with a second
// connection (as another process would hold it) ready to take the write lock, and OnJournal
// recorded. The routine "slow" fires every minute from 08:00 and its action returns at once.
func lockedJournalHarness(t *testing.T, busy time.Duration) (*harness, *sql.Conn, *journalReports) {
	t.Helper()
	return lockedJournalHarnessWith(t, busy, "[[routine]]\nname = \"slow\"\nevery = \"1m\"\noverlap = \"skip\"\nrun = [\"/bin/true\"]\n")
}

// lockedJournalHarnessWith is lockedJournalHarness for the routines of config.
func lockedJournalHarnessWith(t *testing.T, busy time.Duration, config string) (*harness, *sql.Conn, *journalReports) {
	t.Helper()
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, config, start)
	_ = h.j.Close()
	path := filepath.Join(h.dir, "journal.db")
	j, err := journal.OpenBusy(path, busy)
	if err != nil {
		t.Fatal(err)
	}
	h.j = j
	t.Cleanup(func() { _ = j.Close() })
	other, err := sql.Open("sqlite", journalURI(t, path, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	// A closed block: runs return at once, and settle does not wait for the engine to be idle
	// (a claim waiting for the lock keeps it busy).
	h.act.block = make(chan struct{})
	close(h.act.block)
	reports := &journalReports{}
	h.onJournal = reports.note
	h.start()
	return h, conn, reports
}

func lock(t *testing.T, conn *sql.Conn) {
	t.Helper()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("competing writer: %v", err)
	}
}

func unlock(t *testing.T, conn *sql.Conn) {
	t.Helper()
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

// claimingSlow reports whether the run of "slow" is waiting for its claim.
func claimingSlow(e *Engine) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.routines["slow"]
	return a != nil && a.running != nil && a.running.claiming
}

// refused returns how many slots of "slow" the engine keeps because the journal refused them.
func refused(e *Engine) int {
	e.trouble.mu.Lock()
	defer e.trouble.mu.Unlock()
	if u := e.trouble.slots["slow"]; u != nil {
		return len(u.claims) + u.dropped
	}
	return 0
}

// While another process holds the journal's write lock (real SQLITE_BUSY), slots cannot be
// claimed and do not run; the engine says so through OnJournal (with the SQLite error and since
// when), and once the lock is gone every one of them is in the history, missed with the outage's
// span as the reason, and OnJournal hears the journal is fine again.
func TestSlotsTheJournalRefusedAreRecordedMissed(t *testing.T) {
	h, conn, reports := lockedJournalHarness(t, 200*time.Millisecond)
	lock(t, conn)
	for range 3 {
		h.stepMinute()
		eventually(t, "the claim refused", h.e.idle)
	}
	if n := len(h.act.runs()); n != 0 {
		t.Fatalf("%d runs started without a claim", n)
	}
	rep := reports.last()
	if rep.since.IsZero() || rep.err == nil || !strings.Contains(rep.err.Error(), "SQLITE_BUSY") {
		t.Fatalf("while locked, OnJournal last heard %+v; want since set and the SQLite error", rep)
	}
	if rep.since.After(h.clock.Now()) {
		t.Fatalf("unwritable since %v, after now %v", rep.since, h.clock.Now())
	}
	if r := runsOf(t, h.j, "slow"); len(r) != 0 {
		t.Fatalf("runs recorded while locked: %+v", r)
	}

	unlock(t, conn)
	eventually(t, "the refused slots recorded", func() bool { return len(runsOf(t, h.j, "slow")) == 3 })
	runs := runsOf(t, h.j, "slow")
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	for i, r := range runs {
		if want := start.Add(time.Duration(i+1) * time.Minute); !r.Slot.Equal(want) {
			t.Errorf("row %d: slot %v, want %v", i, r.Slot, want)
		}
		if r.Outcome != journal.OutcomeMissed || !strings.HasPrefix(r.Reason, "journal unavailable from ") ||
			!strings.Contains(r.Reason, "SQLITE_BUSY") {
			t.Errorf("row %d: %s (%s); want missed, journal unavailable from … to … (SQLITE_BUSY)", i, r.Outcome, r.Reason)
		}
	}
	eventually(t, "OnJournal told the journal is fine", func() bool {
		rep := reports.last()
		return rep.since.IsZero() && rep.err == nil
	})
	// Writable again: the next slot runs.
	h.stepMinute()
	eventually(t, "the next slot ran", func() bool { return countOutcome(runsOf(t, h.j, "slow"), journal.OutcomeSuccess) == 1 })
}

// Slots due while the routine's previous slot waits for its claim are not "skipped (overlap)":
// no run was in progress, only a claim the journal did not take. They are recorded missed with
// the journal's reason, like the slot whose claim was refused.
func TestSlotsDueWhileAClaimWaitsAreNotOverlapSkips(t *testing.T) {
	h, conn, _ := lockedJournalHarness(t, 3*time.Second)
	lock(t, conn)
	h.stepMinute()
	eventually(t, "the first slot's claim waiting", func() bool { return claimingSlow(h.e) })
	h.stepMinute() // slots 2 and 3 come due while that claim waits for the lock
	h.stepMinute()
	eventually(t, "the first claim refused", func() bool { return refused(h.e) > 0 })
	unlock(t, conn)
	eventually(t, "the refused slots recorded", func() bool { return len(runsOf(t, h.j, "slow")) == 3 })
	for i, r := range runsOf(t, h.j, "slow") {
		if r.Outcome != journal.OutcomeMissed || !strings.HasPrefix(r.Reason, "journal unavailable from ") {
			t.Errorf("row %d (slot %v): %s (%s); want missed, journal unavailable", i, r.Slot, r.Outcome, r.Reason)
		}
	}
	if n := len(h.act.runs()); n != 0 {
		t.Fatalf("%d runs started without a claim", n)
	}
}

// A claim that waits for the lock but is then written runs late (late-by recorded), and the
// slots due while it waited are recorded missed: the journal, not a run, held them up.
func TestSlotsHeldBehindASlowClaimAreMissed(t *testing.T) {
	h, conn, _ := lockedJournalHarness(t, 20*time.Second)
	lock(t, conn)
	h.stepMinute()
	eventually(t, "the first slot's claim waiting", func() bool { return claimingSlow(h.e) })
	h.stepMinute()
	eventually(t, "slot 2 held", func() bool {
		h.e.mu.Lock()
		defer h.e.mu.Unlock()
		return len(h.e.routines["slow"].running.held) == 1
	})
	time.Sleep(slowJournalWrite + 100*time.Millisecond)
	unlock(t, conn)
	eventually(t, "both recorded", func() bool {
		r := runsOf(t, h.j, "slow")
		return len(r) == 2 && r[0].Outcome == journal.OutcomeSuccess
	})
	r := runsOf(t, h.j, "slow")
	if r[1].Outcome != journal.OutcomeMissed || !strings.Contains(r[1].Reason, "a claim waited") {
		t.Fatalf("slot 2: %s (%s); want missed, journal unavailable (a claim waited …)", r[1].Outcome, r[1].Reason)
	}
}

// Beyond maxMissedRows a routine's refused slots are counted, oldest first, so an outage of a
// week over an every-second routine keeps 100 rows and one summary, not 600,000.
func TestUnrecordedKeepsTheNewestSlots(t *testing.T) {
	var u unrecorded
	t0 := time.Unix(1_000_000, 0)
	for i := range maxMissedRows + 5 {
		u.add(journal.Claim{Routine: "tick", Slot: t0.Add(time.Duration(i) * time.Second)})
	}
	if len(u.claims) != maxMissedRows || u.dropped != 5 || !u.first.Equal(t0) || !u.last.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("kept %d, dropped %d from %v to %v; want %d, 5 from %v to %v", len(u.claims), u.dropped, u.first, u.last,
			maxMissedRows, t0, t0.Add(4*time.Second))
	}
	if !u.claims[0].Slot.Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("oldest kept slot %v, want %v", u.claims[0].Slot, t0.Add(5*time.Second))
	}
}

// An idle engine's journal watcher sleeps (an idle owner is not woken every second for it), and
// a write that begins wakes it: a claim that waits for the lock is still reported slow, and the
// slot recorded missed once the lock is gone.
func TestTheJournalWatcherSleepsWhileTheJournalIsIdle(t *testing.T) {
	h, conn, reports := lockedJournalHarness(t, 20*time.Second)
	// The start's own writes, and the look a second after each: wait until 1.5 s pass without a
	// look (on a loaded machine the start can take longer than any fixed sleep).
	before := h.e.journalChecks.Load()
	for deadline := time.Now().Add(20 * time.Second); ; before = h.e.journalChecks.Load() {
		time.Sleep(3 * journalRetryEvery / 2)
		if h.e.journalChecks.Load() == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the journal watcher still looks every second 20 s after the start (%d looks)", h.e.journalChecks.Load())
		}
	}
	time.Sleep(3 * journalRetryEvery)
	if n := h.e.journalChecks.Load() - before; n != 0 {
		t.Fatalf("the journal watcher looked %d times in %v of an idle journal, want 0", n, 3*journalRetryEvery)
	}
	lock(t, conn)
	h.stepMinute()
	eventually(t, "the slow claim reported", func() bool { return !reports.last().since.IsZero() })
	if !claimingSlow(h.e) || refused(h.e) != 0 {
		t.Fatal("reported only once the claim was refused, not while it waited")
	}
	unlock(t, conn)
	eventually(t, "the journal fine again", func() bool {
		rep := reports.last()
		return rep.since.IsZero() && rep.err == nil
	})
}

// The journal-change watch ignores a change of the journal files' attributes (a reader running
// as root makes one on every open: SQLite hands the -wal and -shm to the database's owner), and
// reports a write.
func TestTheJournalWatchIgnoresAttributeChanges(t *testing.T) {
	dir := t.TempDir()
	j, err := journal.Open(filepath.Join(dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	e := &Engine{j: j}
	stop := make(chan struct{})
	defer close(stop)
	changes := e.watchJournalFiles(stop)
	if changes == nil {
		t.Skip("no file watch here")
	}
	if err := os.Chmod(j.Path(), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
		t.Fatal("a chmod of journal.db was reported as a write")
	case <-time.After(300 * time.Millisecond):
	}
	if err := os.WriteFile(j.Path()+"-wal", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("a write to journal.db-wal was not reported")
	}
}

// A slot the journal refused is written before any newer slot's row: once the journal takes
// writes again, the next claim first records the older slot missed. Were the newer row first, an
// owner that yields or dies before its retry would leave the older slot behind the latest
// recorded one, where the next owner's catch-up never looks (found by the chaos test: a stopped
// owner handed over with two held slots in memory).
func TestRefusedSlotsAreRecordedBeforeNewerOnes(t *testing.T) {
	h, conn, _ := lockedJournalHarness(t, 200*time.Millisecond)
	lock(t, conn)
	h.stepMinute()
	eventually(t, "the claim refused", func() bool { return refused(h.e) == 1 })
	unlock(t, conn)
	h.stepMinute() // well before the watcher's next look, a second away
	eventually(t, "both slots recorded", func() bool { return len(runsOf(t, h.j, "slow")) == 2 })
	runs := runsOf(t, h.j, "slow") // in the order written (id)
	if runs[0].Outcome != journal.OutcomeMissed || !runs[0].Slot.Before(runs[1].Slot) || runs[1].Outcome == journal.OutcomeMissed {
		t.Fatalf("written in this order: %+v; want the refused (older) slot missed first, then the newer one's run", runs)
	}
}

// During an outage, claims due together still wait out the busy timeout once, together (group
// commit), not once each in turn behind the recording of the slots refused before them.
func TestClaimsDueTogetherDuringAnOutageDoNotQueue(t *testing.T) {
	var cfg strings.Builder
	const n = 20
	for i := range n {
		fmt.Fprintf(&cfg, "[[routine]]\nname = \"r%02d\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", i)
	}
	const busy = 500 * time.Millisecond
	h, conn, _ := lockedJournalHarnessWith(t, busy, cfg.String())
	lock(t, conn)
	h.stepMinute()
	eventually(t, "the first minute's claims refused", h.e.idle)
	began := time.Now()
	h.stepMinute() // each claim now has older refused slots to record first
	eventually(t, "the second minute's claims refused", h.e.idle)
	if took := time.Since(began); took > n*busy/2 {
		t.Errorf("%d claims took %v to be refused with a %v busy timeout: they waited in turn", n, took.Round(time.Millisecond), busy)
	}
	unlock(t, conn)
}
