package scheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// The last good routines.toml has one owner, the journal: the engine records every file it
// applies; while the file does not parse, the engine says so (ConfigError) and runs the last good
// set; a new owner that starts on the broken file runs that set too, and so do observers see it
// (LoadOrLastGood, read-only); once the file parses again it is the one in force and recorded.
func TestLastGoodConfigOutlivesTheOwner(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	good := "[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n"
	h := newHarness(t, good, start)
	h.start()
	lg, err := h.j.LastGood()
	if err != nil || lg == nil || string(lg.Config.Data) != good || lg.Config.Path != h.cfg || lg.Epoch != 1 {
		t.Fatalf("after start: last good %+v, %v; want the file, recorded by epoch 1", lg, err)
	}
	if p := h.e.ConfigError(); p != nil {
		t.Fatalf("config error %v with a file that parses", p)
	}

	broken := good + "[[routine\n"
	if err := os.WriteFile(h.cfg, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the broken file reported", func() bool { return h.e.ConfigError() != nil })
	if p := h.e.ConfigError(); p.Line != 5 || len(h.e.Routines()) != 1 {
		t.Errorf("broken file: problem %+v, %d routines; want line 5 and the last good routine", p, len(h.e.Routines()))
	}
	if lg2, _ := h.j.LastGood(); string(lg2.Config.Data) != good {
		t.Error("the broken file replaced the last good one in the journal")
	}

	// An observer with the read-only journal sees the last good set and the file's problem.
	ro, err := journal.OpenReadOnly(filepath.Join(h.dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	cfg, p, rlg, err := LoadOrLastGood(h.cfg, ro)
	if err != nil || p == nil || p.Line != 5 || rlg == nil || len(cfg.Routines) != 1 || cfg.Routines[0].Name != "a" {
		t.Fatalf("observer: cfg %v, problem %v, last good %v, err %v", cfg, p, rlg, err)
	}
	if _, _, _, err := LoadOrLastGood(h.cfg, nil); err == nil {
		t.Error("with no journal, a broken file must be an error")
	}

	// A new owner starting on the broken file runs the last good set.
	h.stop()
	h2 := newHarnessOn(t, h, start.Add(time.Minute+30*time.Second))
	h2.start()
	if p := h2.e.ConfigError(); p == nil || len(h2.e.Routines()) != 1 {
		t.Fatalf("a new owner on the broken file: problem %v, routines %d; want the last good set", p, len(h2.e.Routines()))
	}
	h2.advance(time.Minute, time.Minute)
	eventually(t, "the last good set runs under the new owner", func() bool { return len(h2.act.runs()) >= 1 })

	fixed := good + "\n[[routine]]\nname = \"b\"\nevery = \"1h\"\nrun = [\"/bin/true\"]\n"
	if err := os.WriteFile(h.cfg, []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the fixed file applied", func() bool { return h2.e.ConfigError() == nil && len(h2.e.Routines()) == 2 })
	if lg, _ := h2.j.LastGood(); string(lg.Config.Data) != fixed || lg.Epoch != 2 {
		t.Errorf("after the fix: last good %q by epoch %d, want the fixed file by epoch 2", lg.Config.Data, lg.Epoch)
	}
}

// Only an owner records the last good file: a handle without an epoch (an observer's) is
// refused; the same contents are not written again.
func TestSaveLastGoodIsTheOwners(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()
	obs, err := journal.Open(filepath.Join(h.dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	snap := h.e.cfg.Snapshot()
	snap.Data = []byte("# not the owner's\n")
	if err := obs.SaveLastGood(snap, start); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Errorf("an observer recorded the last good file: %v", err)
	}
	before, _ := h.j.LastGood()
	if err := h.j.SaveLastGood(h.e.cfg.Snapshot(), start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if after, _ := h.j.LastGood(); !after.AppliedAt.Equal(before.AppliedAt) {
		t.Errorf("the same contents were recorded again (applied at %v, was %v)", after.AppliedAt, before.AppliedAt)
	}
}
