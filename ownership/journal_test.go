//go:build linux

package ownership

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func diagOf(st Status, k DiagnosisKind) *Diagnosis {
	for i := range st.Diagnoses {
		if st.Diagnoses[i].Kind == k {
			return &st.Diagnoses[i]
		}
	}
	return nil
}

// An owner told that its journal refuses writes says so in owner.json, and observers diagnose
// journal-unwritable with the error and since when (never stalled: the slots are handled, only
// not run); once told the journal is fine, the diagnosis goes.
func TestJournalUnwritableDiagnosis(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, HeartbeatInterval: 100 * time.Millisecond})
	since := time.Now().Add(-7 * time.Second).Truncate(time.Millisecond)
	h.NoteTick(time.Now().Add(-2 * stallGrace)) // overdue work would otherwise be "stalled"
	h.NoteJournal(since, errors.New("database is locked (5) (SQLITE_BUSY)"))
	var st Status
	eventually(t, long, "journal-unwritable reported", func() bool {
		st, _ = Inspect(dir)
		return diagOf(st, DiagJournalUnwritable) != nil
	})
	d := diagOf(st, DiagJournalUnwritable)
	if !d.Since.Equal(since) || !strings.Contains(d.Message, "SQLITE_BUSY") || !strings.Contains(d.Message, since.Local().Format(time.TimeOnly)) {
		t.Fatalf("diagnosis %+v; want since %v and the SQLite error", d, since)
	}
	if st.Healthy() || diagOf(st, DiagStalled) != nil || diagOf(st, DiagNotHeartbeating) != nil {
		t.Fatalf("diagnoses %+v; want journal-unwritable alone", st.Diagnoses)
	}
	h.NoteTick(time.Now().Add(time.Hour))
	h.NoteJournal(time.Time{}, nil)
	eventually(t, long, "healthy again", func() bool {
		st, _ = Inspect(dir)
		return st.Healthy()
	})
}

// A silent owner whose last record said it cannot write its journal is not "wedged, end it":
// the disk that refuses the journal probably refuses owner.json too.
func TestSilentOwnerThatCannotWriteItsJournal(t *testing.T) {
	r := &Record{PID: 42, Host: "h", State: StateOwning, HeartbeatAt: time.Now().Add(-time.Minute),
		JournalUnwritable: &JournalTrouble{Since: time.Now().Add(-2 * time.Minute), Error: "database or disk is full (13)"}}
	ds := diagnose(facts{status: Status{Held: true, Alive: true, Record: r, ObservedAt: time.Now()},
		stale: true, silentFor: time.Minute})
	if len(ds) != 1 || ds[0].Kind != DiagNotHeartbeating {
		t.Fatalf("diagnoses %+v; want not-heartbeating alone", ds)
	}
	if m := ds[0].Message; strings.Contains(m, "kill-wedged") || !strings.Contains(m, "database or disk is full (13)") || !strings.Contains(m, "Free space") {
		t.Fatalf("message %q: want the journal's error and no advice to end the owner", m)
	}
}

// fullTmpfs mounts a 1 MiB tmpfs (root, Linux) and returns it with a function that fills it.
func fullTmpfs(t *testing.T) (dir string, fill func()) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir = filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs (no CAP_SYS_ADMIN here?): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir, func() {
		f, err := os.Create(filepath.Join(dir, "fill"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		chunk := make([]byte, 4096)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				return
			}
		}
	}
}

// On a full disk the owner cannot create owner.json's temp file, but rewrites the record in
// place: observers keep seeing fresh heartbeats and the journal trouble, not a wedged owner.
func TestHeartbeatSurvivesAFullDisk(t *testing.T) {
	mnt, fill := fullTmpfs(t)
	dir, err := StateDir(filepath.Join(mnt, "state"))
	if err != nil {
		t.Fatal(err)
	}
	const beat = 50 * time.Millisecond
	h := acquireT(t, Options{Dir: dir, HeartbeatInterval: beat})
	eventually(t, long, "the record written", func() bool { r, _ := readRecord(dir); return r != nil })
	fill()
	if err := writeJSONAtomic(dir, "probe.json", map[string]int{"x": 1}, false); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a new file on the full disk: %v, want ENOSPC", err)
	}
	h.NoteJournal(time.Now(), errors.New("database or disk is full (13)"))
	time.Sleep(10 * beat)
	st, err := Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Record == nil || st.HeartbeatAge > staleBeats*beat || st.Record.JournalUnwritable == nil {
		t.Fatalf("record %+v, heartbeat age %s: want a fresh heartbeat saying the journal is unwritable", st.Record, st.HeartbeatAge)
	}
	if diagOf(st, DiagJournalUnwritable) == nil || diagOf(st, DiagNotHeartbeating) != nil {
		t.Fatalf("diagnoses %+v; want journal-unwritable, not not-heartbeating", st.Diagnoses)
	}
}

// The in-place rewrite pads to the old size (a reader never sees a stale tail), and refuses
// what is not a regular file without blocking on it.
func TestWriteJSONInPlace(t *testing.T) {
	dir := t.TempDir()
	big := map[string]string{"k": strings.Repeat("x", 500)}
	if err := writeJSONAtomic(dir, "r.json", big, false); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONInPlace(dir, "r.json", map[string]string{"k": "short"}, true); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := readJSON(dir, "r.json", &got); err != nil || got["k"] != "short" {
		t.Fatalf("read back %v, %v", got, err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- writeJSONInPlace(dir, "fifo.json", got, false) }()
	select {
	case err := <-done:
		if !errors.Is(err, errNotInPlace) {
			t.Fatalf("FIFO: %v, want errNotInPlace", err)
		}
	case <-time.After(long):
		t.Fatal("writing a FIFO in place blocked")
	}
	if err := os.Symlink(filepath.Join(dir, "r.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONInPlace(dir, "link.json", got, false); !errors.Is(err, errNotInPlace) {
		t.Fatalf("symlink: %v, want errNotInPlace", err)
	}
}

// A standby whose epoch source is unavailable for now (the journal locked) keeps trying, letting
// the guard go between tries, and owns once the source answers.
func TestWaitRetriesWhileTheEpochFloorIsUnavailable(t *testing.T) {
	dir := testDir(t)
	var calls atomic.Int32
	opts := Options{Dir: dir, HeartbeatInterval: 100 * time.Millisecond, EpochFloor: func() (uint64, error) {
		if calls.Add(1) <= 3 {
			return 0, fmt.Errorf("%w: database is locked", ErrEpochFloorUnavailable)
		}
		return 41, nil
	}}
	if _, err := Acquire(context.Background(), opts); !errors.Is(err, ErrEpochFloorUnavailable) {
		t.Fatalf("Acquire: %v, want ErrEpochFloorUnavailable", err)
	}
	calls.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	h, err := Wait(ctx, opts)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	defer func() { _ = h.Release(context.Background()) }()
	if n := calls.Load(); n != 4 || h.Epoch() != 42 {
		t.Fatalf("EpochFloor called %d times, epoch %d; want 4 calls and epoch 42", n, h.Epoch())
	}
}
