package scheduler

import (
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
)

// The engine tells OnChange when what Routines and Problems return changes: a run starting and
// ending (the desktop shows both at once instead of polling), a slot recorded without a run,
// and routines.toml found broken. Each check reads the count before the change, so a call the
// change did not cause cannot pass it.
func TestOnChangeIsToldOfRunsRecordsAndReloads(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	h := newHarness(t, "[[routine]]\nname = \"a\"\nevery = \"1m\"\nrun = [\"/bin/true\"]\noverlap = \"skip\"\n", start)
	var changes atomic.Int64
	h.onChange = func() { changes.Add(1) }
	h.act.block, h.act.started = make(chan struct{}), make(chan string, 4)
	e := h.start()
	eventually(t, "the start settled", func() bool { return h.e.idle() })

	before := changes.Load()
	h.advance(time.Minute, time.Minute)
	h.act.waitStarted(t)
	eventually(t, "a change told when the run started", func() bool {
		return changes.Load() > before && e.Routines()[0].Running
	})

	before = changes.Load()
	h.advance(time.Minute, time.Minute) // 08:02 is due while 08:01 runs: recorded skipped (overlap)
	eventually(t, "a change told for the slot recorded skipped", func() bool {
		return changes.Load() > before && countOutcome(runsOf(t, h.j, "a"), journal.OutcomeSkipped) == 1
	})

	before = changes.Load()
	close(h.act.block)
	eventually(t, "a change told when the run ended", func() bool {
		return changes.Load() > before && !e.Routines()[0].Running
	})

	before = changes.Load()
	if err := os.WriteFile(h.cfg, []byte("[[routine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a change told for the broken routines.toml", func() bool {
		return e.ConfigError() != nil && changes.Load() > before
	})
}
