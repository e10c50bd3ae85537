package scheduler

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// A config edit applies on its own (fsnotify); a file that does not parse keeps the last good
// set running and is reported at its position; an invalid routine is disabled, others run.
func TestConfigReload(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.start()

	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(h.cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n[[routine\n")
	eventually(t, "parse problem reported", func() bool {
		p := h.e.Problems()
		return len(p) == 1 && p[0].Line == 5 && strings.HasSuffix(p[0].File, "routines.toml")
	})
	h.advance(time.Minute, time.Minute)
	eventually(t, "last good set still runs", func() bool { return len(h.act.runs()) == 1 })

	write("[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n\n[[routine]]\nname = \"b\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n\n[[routine]]\nname = \"c\"\nevery = \"0s\"\nrun = [\"/bin/true\"]\n")
	eventually(t, "new set applied", func() bool {
		p := h.e.Problems()
		return len(p) == 1 && p[0].Routine == "c" && p[0].Line == 13 && len(h.e.Routines()) == 3
	})
	h.advance(time.Minute, time.Minute)
	eventually(t, "a and b run", func() bool {
		return countOutcome(runsOf(t, h.j, "a"), journal.OutcomeSuccess) == 2 && countOutcome(runsOf(t, h.j, "b"), journal.OutcomeSuccess) == 1
	})
	var disabled string
	for _, s := range h.e.Routines() {
		if s.Name == "c" {
			disabled = s.Disabled
		}
	}
	if !strings.Contains(disabled, "routines.toml:13:1: every must be") {
		t.Fatalf("disabled state: %q", disabled)
	}
}

// An edit made while Start is still arming the routines (here: right after arming, before the
// start's catch-up pass) is applied: the watch is open before Start reads the file, so the edit
// cannot fall between the read and the watch and wait for the next one.
func TestConfigEditDuringStartIsApplied(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n", start)
	h.afterArm = func(*Engine) {
		body := "[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\n[[routine\n"
		if err := os.WriteFile(h.cfg, []byte(body), 0o600); err != nil {
			t.Error(err)
		}
	}
	h.start()
	eventually(t, "the edit made during Start reported", func() bool {
		p := h.e.Problems()
		return len(p) == 1 && p[0].Line == 5
	})
}
