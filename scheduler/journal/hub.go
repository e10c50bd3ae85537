package journal

// What the journal records for the hub: which device claimed each slot, the slots another
// device ran and then died in the middle of, and the shared every-anchor
// (docs/design.md#9-devices).

import (
	"database/sql"
	"fmt"
	"time"
)

// ID returns the journal's own random id (made once, by migration 2). The hub names a claim by
// device and journal id, so a device recognises its own claims after a restart.
func (j *Journal) ID() string { return j.id }

// SettleElsewhere records that the run of slot of routine, which device claimed on the hub, was
// cut short: that device stopped answering mid-run (its liveness key expired) and this device
// was the one that ended the run on the hub. It writes the slot as `interrupted` with reason,
// as a new row, or by changing the `skipped` row this device wrote when it lost the slot to
// device; any other row for the slot (a run of this device's own) is left as it is. Errors:
// ErrFenced when a newer epoch is recorded or Acquire was not called; ErrReadOnly; the write
// error, wrapped.
func (j *Journal) SettleElsewhere(routine string, slot time.Time, device, reason string, now time.Time) error {
	if j.readOnly {
		return fmt.Errorf("settle %s %s: %w", routine, SlotKey(slot), ErrReadOnly)
	}
	epoch := j.epoch.Load()
	if epoch == 0 {
		return fmt.Errorf("settle %s %s: %w", routine, SlotKey(slot), ErrFenced)
	}
	err := j.write1(func(tx *sql.Tx) error {
		maxE, err := maxEpoch(tx)
		if err != nil {
			return err
		}
		if err := fencedBy(maxE, epoch); err != nil {
			return err
		}
		// The skipped row's own epoch stays: it says which of this device's owners saw the slot.
		_, err = tx.Exec(`INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome, reason, started, finished, device)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (routine, slot_key) DO UPDATE SET outcome = excluded.outcome, reason = excluded.reason,
				finished = excluded.finished
			WHERE runs.outcome = ? AND runs.device = excluded.device`,
			routine, SlotKey(slot), slot.UnixNano(), TriggerSchedule, epoch, OutcomeInterrupted, reason,
			now.UnixNano(), now.UnixNano(), device, OutcomeSkipped)
		return err
	})
	if err != nil {
		return fmt.Errorf("settle %s %s: %w", routine, SlotKey(slot), err)
	}
	return nil
}

// SetAnchors makes anchors (routine → the every-grid anchor the devices share through the hub)
// the persisted anchors of those routines, so status and preview show the slots armed. Errors:
// ErrFenced when a newer epoch is recorded; the write error; wrapped.
func (j *Journal) SetAnchors(anchors map[string]time.Time) error {
	if len(anchors) == 0 {
		return nil
	}
	err := j.write(func(tx *sql.Tx) error {
		for name, a := range anchors {
			if err := j.fencedUpdate(tx, `UPDATE arming SET anchor = ? WHERE routine = ? AND `+fenced,
				a.UnixNano(), name, j.epoch.Load()); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set anchors: %w", err)
	}
	return nil
}
