package journal

import (
	"errors"
	"testing"
	"time"
)

// A missed or skipped row behind the routine's latest run is recorded (it starts nothing), while
// a run behind it is still refused: catch-up writing missed rows after the new owner's first
// timer claimed a later slot must not lose them (found by the chaos test's "no silent loss" check).
func TestMissedRowsBehindALaterRunAreRecorded(t *testing.T) {
	j := acquiredJournal(t)
	t0 := time.Unix(20_000, 0)
	if _, err := j.Claim(Claim{Routine: "tick", Slot: t0.Add(3 * time.Second), Trigger: TriggerSchedule,
		Outcome: OutcomeRunning, Started: t0.Add(3 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	for i, outcome := range []string{OutcomeMissed, OutcomeSkipped} {
		slot := t0.Add(time.Duration(i) * time.Second)
		id, err := j.Claim(Claim{Routine: "tick", Slot: slot, Trigger: TriggerCatchUp, Outcome: outcome,
			Reason: "superseded by a later slot", Started: t0.Add(3 * time.Second)})
		if err != nil || id == 0 {
			t.Fatalf("%s row for %v behind a later run: id %d, err %v; want it recorded", outcome, slot, id, err)
		}
	}
	if _, err := j.Claim(Claim{Routine: "tick", Slot: t0.Add(2 * time.Second), Trigger: TriggerSchedule,
		Outcome: OutcomeRunning, Started: t0.Add(3 * time.Second)}); !errors.Is(err, ErrSlotClaimed) {
		t.Fatalf("run behind a later run: err %v, want ErrSlotClaimed (a backward jump never re-fires)", err)
	}
	if _, err := j.Claim(Claim{Routine: "tick", Slot: t0, Trigger: TriggerCatchUp, Outcome: OutcomeMissed}); !errors.Is(err, ErrSlotClaimed) {
		t.Fatalf("second missed row for the same slot: err %v, want ErrSlotClaimed", err)
	}
}
