//go:build unix || windows

package e2e

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

// `preview NAME` of an `every` routine lists the slots the running owner really runs: the grid
// starts where the owner armed the routine (its anchor, in the journal), not at the moment
// preview runs.
func TestPreviewListsTheOwnersSlots(t *testing.T) {
	const every = 5 * time.Second
	home := newHome(t, `
[[routine]]
name = "tick"
every = "5s"
shell = "exit 0" # sh and cmd alike
`)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	first := waitRun(t, home, "tick", "a first run", func(runOut) bool { return true })
	onGrid := func(s time.Time) bool { return s.Sub(first.Slot)%every == 0 }

	// Preview half an interval off the owner's grid, so a grid counted from now cannot match it
	// by chance.
	now := time.Now()
	offGrid := first.Slot.Add(now.Sub(first.Slot).Truncate(every) + every + every/2)
	time.Sleep(time.Until(offGrid))
	p := preview(t, home, "tick", "--count", "3")
	for i, s := range p.Slots {
		if !s.After(p.From) || !onGrid(s) || (i > 0 && s.Sub(p.Slots[i-1]) != every) {
			t.Fatalf("preview from %s = %v: not the owner's grid (its first run: slot %s)", p.From, p.Slots, first.Slot)
		}
	}
	if len(p.Slots) != 3 {
		t.Fatalf("preview = %v, want 3 slots", p.Slots)
	}

	// --from off the grid lists the same grid.
	from := first.Slot.Add(20*every + 2*time.Second)
	p2 := preview(t, home, "tick", "--from", from.Format(time.RFC3339), "--count", "2")
	if len(p2.Slots) != 2 || !p2.Slots[0].Equal(first.Slot.Add(21*every)) || !p2.Slots[1].Equal(first.Slot.Add(22*every)) {
		t.Fatalf("preview --from %s = %v, want %s and %s", from, p2.Slots, first.Slot.Add(21*every), first.Slot.Add(22*every))
	}

	// The owner runs the slot preview named first.
	waitRun(t, home, "tick", "the first previewed slot's run", func(r runOut) bool {
		return r.Slot.Equal(p.Slots[0]) && r.Outcome == "success"
	})
	d.stopWith(syscall.SIGTERM)
}

// previewOut is `preview --json`.
type previewOut struct {
	Routine string      `json:"routine"`
	From    time.Time   `json:"from"`
	Slots   []time.Time `json:"slots"`
}

// preview runs `preview NAME args... --json` and decodes it.
func preview(t *testing.T, home, name string, args ...string) previewOut {
	t.Helper()
	stdout, stderr, code := run(t, home, append([]string{"preview", name, "--json"}, args...)...)
	var p previewOut
	if err := json.Unmarshal([]byte(stdout), &p); err != nil || code != 0 {
		t.Fatalf("preview %s --json: exit %d, %v\n%s%s", name, code, err, stdout, stderr)
	}
	return p
}

// waitRun polls `history NAME --json` until a run satisfies ok, and returns it; after
// ownDeadline it fails the test saying what it waited for (want).
func waitRun(t *testing.T, home, name, want string, ok func(runOut) bool) runOut {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for {
		stdout, stderr, code := run(t, home, "history", name, "--json")
		var runs []runOut
		if err := json.Unmarshal([]byte(stdout), &runs); err != nil || code != 0 {
			t.Fatalf("history %s --json: exit %d, %v\n%s%s", name, code, err, stdout, stderr)
		}
		for _, r := range runs {
			if ok(r) {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("history of %s after %s: %+v; want %s", name, ownDeadline, runs, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
