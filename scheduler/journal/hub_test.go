package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// A claim's device is kept and read back; another device's run cut short is recorded
// interrupted over the `skipped` row this device wrote when it lost the slot to that device,
// or as a new row, and never over a run of this device's own or a slot lost to another device.
func TestSettleElsewhere(t *testing.T) {
	j := acquiredJournal(t)
	at := func(s int) time.Time { return time.Unix(int64(1000+s), 0) }
	claims := []Claim{
		{Routine: "r", Slot: at(1), Trigger: TriggerSchedule, Outcome: OutcomeSkipped, Reason: "claimed by laptop", Device: "laptop"},
		{Routine: "r", Slot: at(2), Trigger: TriggerSchedule, Outcome: OutcomeSuccess, Device: "desktop"},
		{Routine: "r", Slot: at(3), Trigger: TriggerSchedule, Outcome: OutcomeSkipped, Reason: "claimed by server", Device: "server"},
	}
	for _, c := range claims {
		if _, err := j.Claim(c); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Unix(2000, 0)
	for s := 1; s <= 4; s++ {
		if err := j.SettleElsewhere("r", at(s), "laptop", "device laptop stopped answering", now); err != nil {
			t.Fatalf("settle slot %d: %v", s, err)
		}
	}
	runs, err := j.History("r", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for _, r := range runs {
		got[r.Slot.Unix()-1000] = fmt.Sprintf("%s %s %s", r.Outcome, r.Device, r.Reason)
	}
	want := map[int64]string{
		1: "interrupted laptop device laptop stopped answering",
		2: "success desktop ",
		3: "skipped server claimed by server",
		4: "interrupted laptop device laptop stopped answering",
	}
	for s, w := range want {
		if got[s] != w {
			t.Errorf("slot %d: %q, want %q", s, got[s], w)
		}
	}
	// A fenced owner records nothing.
	acquireNewer(t, j.path, 2)
	if err := j.SettleElsewhere("r", at(5), "laptop", "x", now); !errors.Is(err, ErrFenced) {
		t.Fatalf("settle by a fenced owner: %v, want ErrFenced", err)
	}
}

// A journal from before the device column reads read-only, every device "".
func TestReadOnlyBeforeDeviceMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	db, err := sql.Open("sqlite", uriT(t, path, nil))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:deviceMigration-1] {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d;
		INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome) VALUES ('r', 'k', 1, 'schedule', 1, 'success')`, deviceMigration-1)); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	j, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	runs, err := j.History("", 0)
	if err != nil || len(runs) != 1 || runs[0].Device != "" || runs[0].Outcome != OutcomeSuccess {
		t.Fatalf("history of an older journal: %+v %v", runs, err)
	}
}
