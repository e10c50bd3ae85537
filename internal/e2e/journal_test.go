//go:build unix

package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
	_ "modernc.org/sqlite"
)

// The journal in trouble: held by another process, locked through its -shm file, on a full disk,
// or not a journal at all. The promise under test: no run starts without a durable claim, no slot
// leaves the history without a word, and status says what is wrong (journal-unwritable, exit 4).

// everySecond is an `every = "1s"` routine that does nothing.
const everySecond = `
[[routine]]
name = "tick"
every = "1s"
shell = 'true'
timeout = "5s"
`

// histRow is the part of `history --json` these tests read.
type histRow struct {
	Slot    time.Time `json:"slot"`
	Outcome string    `json:"outcome"`
	Reason  string    `json:"reason"`
	Trigger string    `json:"trigger"`
}

// history returns every run of the profile, newest first.
func history(t *testing.T, home string) []histRow {
	t.Helper()
	stdout, stderr, code := run(t, home, "history", "--json", "--limit", "100000")
	var rows []histRow
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || code != 0 {
		t.Fatalf("history --json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	return rows
}

// successes counts the runs that ran and succeeded with a slot after after.
func successes(rows []histRow, after time.Time) int {
	n := 0
	for _, r := range rows {
		if r.Outcome == "success" && r.Slot.After(after) {
			n++
		}
	}
	return n
}

// waitSuccesses waits until the routine has n successful runs with a slot after after.
func waitSuccesses(t *testing.T, home string, n int, after time.Time) {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for successes(history(t, home), after) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d successful runs after %v within %s: %+v", n, after, ownDeadline, history(t, home))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// holdExclusive takes the journal's write lock as `sqlite3 journal.db 'BEGIN EXCLUSIVE'` would,
// from this test process, and returns the function that releases it.
func holdExclusive(t *testing.T, home string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", journalURI(t, filepath.Join(home, "journal.db")))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatalf("BEGIN EXCLUSIVE: %v", err)
	}
	released := false
	release := func() {
		if released {
			return
		}
		released = true
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		_ = conn.Close()
		_ = db.Close()
	}
	t.Cleanup(release)
	return release
}

// holdShmReadLock takes a POSIX read lock on the byte of journal.db-shm that SQLite's WAL
// writer must lock exclusively (WAL_WRITE_LOCK: offset 120, see sqlite3's os_unix.c
// UNIX_SHM_BASE), as any process that can open the file for reading can. Every write then
// waits out SQLite's busy timeout and fails.
func holdShmReadLock(t *testing.T, home string) func() {
	t.Helper()
	f, err := os.Open(filepath.Join(home, "journal.db-shm"))
	if err != nil {
		t.Fatal(err)
	}
	lk := syscall.Flock_t{Type: syscall.F_RDLCK, Whence: 0, Start: 120, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatalf("read lock on journal.db-shm: %v", err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			_ = f.Close() // closing drops the process's POSIX locks on the file
		}
	}
	t.Cleanup(release)
	return release
}

// checkNoHoles checks the history of "tick" between its first and last slot: one row per
// second, no `skipped`, and during [from, to) only slots that ran or were recorded missed with
// the journal's reason containing cause — at least minMissed of those.
func checkNoHoles(t *testing.T, rows []histRow, from, to time.Time, cause string, minMissed int) {
	t.Helper()
	bySlot := map[time.Time][]histRow{}
	first, last := rows[0].Slot, rows[0].Slot
	for _, r := range rows {
		s := r.Slot.UTC()
		bySlot[s] = append(bySlot[s], r)
		if s.Before(first) {
			first = s
		}
		if s.After(last) {
			last = s
		}
	}
	missed := 0
	for s := first.UTC(); !s.After(last); s = s.Add(time.Second) {
		rs := bySlot[s]
		switch {
		case len(rs) == 0:
			t.Errorf("slot %s has no record: a hole in the history", s.Format(time.TimeOnly))
			continue
		case len(rs) > 1:
			t.Errorf("slot %s has %d records: %+v", s.Format(time.TimeOnly), len(rs), rs)
		}
		r := rs[0]
		switch {
		case r.Outcome == "skipped":
			t.Errorf("slot %s: skipped (%s); nothing ran in its way", s.Format(time.TimeOnly), r.Reason)
		case r.Outcome == "missed" && strings.HasPrefix(r.Reason, "journal unavailable from ") && strings.Contains(r.Reason, cause):
			if s.Before(from) || !s.Before(to.Add(time.Second)) {
				t.Errorf("slot %s outside the outage [%s, %s) recorded missed: %s", s.Format(time.TimeOnly),
					from.Format(time.TimeOnly), to.Format(time.TimeOnly), r.Reason)
			}
			missed++
		case r.Outcome != "success":
			t.Errorf("slot %s: %s (%s), want success or missed (journal unavailable … %s)", s.Format(time.TimeOnly), r.Outcome, r.Reason, cause)
		}
	}
	if missed < minMissed {
		t.Errorf("%d slots recorded missed for the journal, want at least %d: %+v", missed, minMissed, rows)
	}
}

// An `every = "1s"` routine while another process holds the journal's lock for about 7 s
// (longer than SQLite's 5 s busy timeout, so claims are refused, not only slow): nothing runs
// without its claim, status says journal-unwritable with exit 4 while it lasts, and afterwards
// the history has exactly one record for every slot — those of the outage missed with the
// journal's reason, none wrongly `skipped (overlap)`. Once by `BEGIN EXCLUSIVE` on journal.db,
// once by a read lock on journal.db-shm (any process that can read that file can take it:
// SQLite creates it with journal.db's permissions).
func TestLockedJournalLeavesNoHoleInHistory(t *testing.T) {
	lockers := map[string]func(*testing.T, string) func(){
		"BEGIN EXCLUSIVE":             holdExclusive,
		"read lock on journal.db-shm": holdShmReadLock,
	}
	for name, hold := range lockers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := newHome(t, everySecond)
			d := start(t, home, "daemon")
			waitOwner(t, home, d.pid())
			waitSuccesses(t, home, 1, time.Time{})

			release := hold(t, home)
			lockedAt := time.Now()
			sawUnwritable := false
			for time.Since(lockedAt) < 7*time.Second {
				s := status(t, home)
				if hasDiagnosis(s, "journal-unwritable") {
					if s.ExitCode != 4 || s.Health != "unhealthy" {
						t.Errorf("journal-unwritable with health %s, exit %d; want unhealthy, 4", s.Health, s.ExitCode)
					}
					for _, dg := range s.Diagnoses {
						if dg.Kind == "journal-unwritable" && !strings.Contains(dg.Message, "SQLITE_BUSY") && !strings.Contains(dg.Message, "waited") {
							t.Errorf("journal-unwritable says %q: want the SQLite error or the wait", dg.Message)
						}
					}
					sawUnwritable = true
				}
				if hasDiagnosis(s, "not-heartbeating") || hasDiagnosis(s, "stalled") {
					t.Errorf("status while the journal is locked: %+v; the owner is healthy", s.Diagnoses)
				}
				time.Sleep(300 * time.Millisecond)
			}
			release()
			releasedAt := time.Now()
			if !sawUnwritable {
				t.Errorf("status never said journal-unwritable during a %s lock", time.Since(lockedAt).Round(time.Second))
			}
			waitSuccesses(t, home, 1, releasedAt.Add(time.Second))
			waitStatus(t, home, "healthy once the lock is gone", func(s statusOut) bool { return s.ExitCode == 0 })

			d.signal(syscall.SIGTERM)
			if code := d.wait(cmdTimeout); code != 0 {
				t.Fatalf("daemon: exit %d on SIGTERM", code)
			}
			// About 7 s locked with a 5 s busy timeout: at least one refused claim and the
			// slots held behind it.
			checkNoHoles(t, history(t, home), lockedAt.Truncate(time.Second), releasedAt, "", 4)
		})
	}
}

// A standby (`daemon --wait`) that takes over while another process holds the journal's lock
// does not exit: it owns, says journal-unwritable, and starts the routines as soon as the lock
// is gone.
func TestStandbyOwnsOnceTheLockedJournalIsFree(t *testing.T) {
	t.Parallel()
	home := newHome(t, everySecond)
	a := start(t, home, "daemon")
	waitOwner(t, home, a.pid())
	waitSuccesses(t, home, 1, time.Time{})
	b := start(t, home, "daemon", "--wait")
	b.waitStderr("Standing by", ownDeadline)

	release := holdExclusive(t, home)
	a.signal(syscall.SIGKILL)
	a.wait(cmdTimeout)
	s := waitStatus(t, home, "the standby owning, journal-unwritable (exit 4)", func(s statusOut) bool {
		return s.Owner != nil && s.Owner.PID == b.pid() && hasDiagnosis(s, "journal-unwritable")
	})
	if s.ExitCode != 4 {
		t.Errorf("journal-unwritable with exit %d, want 4", s.ExitCode)
	}
	// SQLite's busy timeout (5 s) ends the first attempt; the standby logs and tries again.
	b.waitStderr("the journal is unavailable: no routine runs until it is; trying again", ownDeadline)
	time.Sleep(time.Second)
	if !b.running() {
		t.Fatalf("the standby exited (%d) while the journal was locked:\n%s", b.code, b.stderr.String())
	}
	if strings.Contains(b.stderr.String(), "Owning the routines") {
		t.Fatalf("the standby started the routines while the journal was locked:\n%s", b.stderr.String())
	}
	release()
	releasedAt := time.Now()
	b.waitStderr("Owning the routines", ownDeadline)
	waitStatus(t, home, "healthy", func(s statusOut) bool { return s.ExitCode == 0 && s.Owner.PID == b.pid() })
	waitSuccesses(t, home, 1, releasedAt)
	b.signal(syscall.SIGTERM)
	if code := b.wait(cmdTimeout); code != 0 {
		t.Fatalf("standby: exit %d on SIGTERM", code)
	}
}

// A journal.db that is not a Routinely journal — random bytes, another program's SQLite
// database — is refused by the daemon and by every observer with what to do, is left
// byte-identical with nothing created beside it, and history never says "No runs yet" for it.
func TestNotAJournalIsRefused(t *testing.T) {
	t.Parallel()
	files := map[string]func(t *testing.T, path string){
		"random bytes": func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("\x13\x37 not SQLite \xfe"), 500), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"another program's database": func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", journalURI(t, path))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []string{`CREATE TABLE contacts (name TEXT)`, `INSERT INTO contacts VALUES ('Ada')`} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for name, write := range files {
		t.Run(name, func(t *testing.T) {
			home := newHome(t, hourly)
			path := filepath.Join(home, "journal.db")
			write(t, path)
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			says := func(what, out string) {
				t.Helper()
				for _, s := range []string{path, "not a Routinely journal", "Nothing was changed", "move it aside"} {
					if !strings.Contains(out, s) {
						t.Errorf("%s does not say %q:\n%s", what, s, out)
					}
				}
			}
			for _, args := range [][]string{{"daemon"}, {"daemon", "--wait", "--timeout", "5s"}} {
				_, stderr, code := run(t, home, args...)
				if code != 1 {
					t.Errorf("%v: exit %d, want 1", args, code)
				}
				says(fmt.Sprint(args), stderr)
			}
			stdout, stderr, code := run(t, home, "history")
			if code == 0 || strings.Contains(stdout, "No runs yet") {
				t.Errorf("history: exit %d, stdout %q; want a refusal, not an empty history", code, stdout)
			}
			says("history", stderr)
			if _, stderr, code := run(t, home, "routines"); code == 0 {
				t.Errorf("routines: exit 0")
			} else {
				says("routines", stderr)
			}
			stdout, _, _ = run(t, home, "status", "--json")
			var st struct {
				JournalError string `json:"journal_error"`
				ExitCode     int    `json:"exit_code"`
			}
			if err := json.Unmarshal([]byte(stdout), &st); err != nil {
				t.Fatalf("status --json: %v\n%s", err, stdout)
			}
			says("status --json journal_error", st.JournalError)
			if st.ExitCode != 3 {
				t.Errorf("status: exit %d, want 3 (nobody owns)", st.ExitCode)
			}
			stdout, _, _ = run(t, home, "status")
			says("status", stdout)

			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("journal.db changed (err %v): %d bytes, had %d", err, len(got), len(want))
			}
			for _, side := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Stat(path + side); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists beside the refused journal (err %v)", filepath.Base(path+side), err)
				}
			}
		})
	}
}

// The state directory on a 2 MB tmpfs that fills up: SQLite refuses every claim (disk full) and
// owner.json cannot be replaced, yet the owner keeps heartbeating (the record is rewritten in
// place), status says journal-unwritable — never not-heartbeating, whose advice would end a
// healthy owner — and once space is freed every slot of the outage is in the history.
func TestFullDiskIsJournalUnwritableNotWedged(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs (no CAP_SYS_ADMIN here?): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	home := filepath.Join(mnt, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, everySecond)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	waitSuccesses(t, home, 2, time.Time{})

	fill := filepath.Join(mnt, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 64<<10); ; {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	_ = f.Close()
	fullAt := time.Now()
	sawUnwritable := false
	for time.Since(fullAt) < 6*time.Second {
		s := status(t, home)
		if hasDiagnosis(s, "not-heartbeating") {
			t.Fatalf("a full disk reported as %+v: the owner is healthy", s.Diagnoses)
		}
		if hasDiagnosis(s, "journal-unwritable") && s.ExitCode == 4 {
			sawUnwritable = true
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !sawUnwritable {
		t.Errorf("status never said journal-unwritable on a full disk")
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	freedAt := time.Now()
	waitSuccesses(t, home, 2, freedAt.Add(time.Second))
	waitStatus(t, home, "healthy once space is free", func(s statusOut) bool { return s.ExitCode == 0 })
	d.signal(syscall.SIGTERM)
	if code := d.wait(cmdTimeout); code != 0 {
		t.Fatalf("daemon: exit %d on SIGTERM", code)
	}
	checkNoHoles(t, history(t, home), fullAt.Truncate(time.Second), freedAt, "full", 3)
}

// The owner stopped (SIGSTOP: Ctrl-Z, a paused VM) while a claim waits for the journal's lock:
// the stop is not counted as the journal's. The claim waited about 0.4 s while the owner ran, so
// the journal was never slow — no "journal unavailable" record, no warning — and the slot due
// during the stop meets the overlap policy behind the run it was held behind (its claim went
// through), as after a suspend. Counting the 8 s of the stop, the slot would be recorded missed
// for the journal and the log would warn of a slow write.
func TestAStopDuringAClaimIsNotASlowJournal(t *testing.T) {
	home := newHome(t, `
[[routine]]
name = "tick"
every = "5s"
shell = 'sleep 2'
timeout = "1m"
`)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	d.waitStderr("routine=tick slot=", 15*time.Second)
	m := regexp.MustCompile(`routine=tick slot=(\S+)`).FindStringSubmatch(d.stderr.String())
	first, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		t.Fatalf("tick's first slot %q: %v", m[1], err)
	}
	slot := first.Add(5 * time.Second)
	for time.Until(slot) < time.Second {
		slot = slot.Add(5 * time.Second)
	}

	// The claim of slot (written 50 ms ahead of it) waits for the lock; the owner is stopped
	// 0.1 s after the slot and continued 8 s later, with the lock held 0.25 s longer, so the
	// slot due during the stop arrives while the claim still waits.
	time.Sleep(time.Until(slot.Add(-300 * time.Millisecond)))
	release := holdExclusive(t, home)
	time.Sleep(time.Until(slot.Add(100 * time.Millisecond)))
	d.signal(syscall.SIGSTOP)
	time.Sleep(8 * time.Second)
	d.signal(syscall.SIGCONT)
	time.Sleep(250 * time.Millisecond)
	release()

	finished := func() bool {
		for _, r := range history(t, home) {
			if r.Slot.Equal(slot) && r.Outcome != "running" {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(15 * time.Second); !finished(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("slot %s has not finished 15 s after the stop ended:\n%s", slot.Format(time.TimeOnly), d.stderr.String())
		}
	}
	d.signal(syscall.SIGTERM)
	d.wait(cmdTimeout)

	rows := history(t, home)
	bySlot := map[time.Time][]histRow{}
	for _, r := range rows {
		bySlot[r.Slot.UTC()] = append(bySlot[r.Slot.UTC()], r)
		if strings.Contains(r.Reason, "journal unavailable") {
			t.Errorf("slot %s: %s (%s); the journal was never slow, the owner was stopped", r.Slot.Format(time.TimeOnly), r.Outcome, r.Reason)
		}
	}
	if rs := bySlot[slot.UTC()]; len(rs) != 1 || rs[0].Outcome != "success" {
		t.Errorf("slot %s: %+v, want one success", slot.Format(time.TimeOnly), rs)
	}
	during := slot.Add(5 * time.Second)
	if rs := bySlot[during.UTC()]; len(rs) != 1 || rs[0].Outcome != "skipped" || rs[0].Reason != "overlap" {
		t.Errorf("slot %s, due during the stop behind the claim: %+v, want one skipped (overlap)", during.Format(time.TimeOnly), rs)
	}
	for _, warning := range []string{"a journal write is taking long", "the journal refuses writes", "journal unavailable"} {
		if strings.Contains(d.stderr.String(), warning) {
			t.Errorf("the owner logged %q for a stop:\n%s", warning, d.stderr.String())
		}
	}
}

// journalURI is the URI the journal itself opens path by (journal.URI), or the test fails.
func journalURI(t *testing.T, path string) string {
	t.Helper()
	u, err := journal.URI(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
