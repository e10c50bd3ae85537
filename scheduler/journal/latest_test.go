package journal

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// beforeLatest answers LatestRuns and LastSlots as a journal before latestMigration is read:
// from runs itself, through its indexes. It is the oracle the latest table must agree with.
func beforeLatest(t *testing.T, j *Journal, routines []string) (map[string]int64, map[string]time.Time) {
	t.Helper()
	saved := j.version
	j.version = latestMigration - 1
	defer func() { j.version = saved }()
	return latestIDs(t, j, routines), lastSlots(t, j)
}

func latestIDs(t *testing.T, j *Journal, routines []string) map[string]int64 {
	t.Helper()
	runs, err := j.LatestRuns(routines)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for name, r := range runs {
		ids[name] = r.ID
	}
	return ids
}

func lastSlots(t *testing.T, j *Journal) map[string]time.Time {
	t.Helper()
	s, err := j.LastSlots()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkLatest fails t when the latest table's answers differ from runs' own.
func checkLatest(t *testing.T, j *Journal, routines []string, when string) {
	t.Helper()
	wantIDs, wantSlots := beforeLatest(t, j, routines)
	if got := latestIDs(t, j, routines); !reflect.DeepEqual(got, wantIDs) {
		t.Errorf("%s: latest runs %v, runs say %v", when, got, wantIDs)
	}
	if got := lastSlots(t, j); !reflect.DeepEqual(got, wantSlots) {
		t.Errorf("%s: last slots %v, runs say %v", when, got, wantSlots)
	}
}

// Whatever writes runs — claims of every trigger and outcome in any order (a missed record of an
// older slot after a newer run, run-now requests), another device's settled run, retention — the
// latest table says what the runs themselves say: each routine's newest run and latest
// scheduled slot.
func TestLatestFollowsEveryWriteToRuns(t *testing.T) {
	j := acquiredJournal(t)
	routines := []string{"a", "b", "c", "never"}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	manual := 0
	for i := range 300 {
		r := routines[rng.IntN(3)]
		slot := t0.Add(time.Duration(rng.IntN(200)) * time.Minute)
		c := Claim{Routine: r, Slot: slot, Trigger: TriggerSchedule, Outcome: OutcomeRunning, Started: slot}
		switch rng.IntN(5) {
		case 0:
			manual++
			c.Trigger, c.Key = TriggerManual, fmt.Sprintf("manual:%d", manual)
			c.Slot = t0.Add(time.Duration(300+i) * time.Minute) // later than any scheduled slot
		case 1:
			c.Outcome, c.Reason = OutcomeMissed, "test"
		case 2:
			c.Trigger = TriggerCatchUp
		case 3:
			if err := j.SettleElsewhere(r, slot, "laptop", "test", slot); err != nil {
				t.Fatal(err)
			}
			continue
		}
		_, _ = j.Claim(c) // refusals (claimed, high-water) are part of the mix
	}
	checkLatest(t, j, routines, "after 300 writes")
	for _, r := range routines[:3] {
		if err := j.Prune(r, 5); err != nil {
			t.Fatal(err)
		}
	}
	checkLatest(t, j, routines, "after retention")
}

// A journal from before latestMigration is migrated with its history: the latest table starts
// out true, and a read-only look at an unmigrated journal still answers from runs.
func TestLatestMigrationFillsInTheHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	db, err := sql.Open("sqlite", uriT(t, path, nil))
	if err != nil {
		t.Fatal(err)
	}
	for v, m := range migrations[:latestMigration-1] {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", v+1, err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d;
		INSERT INTO epochs VALUES (1, 0);
		INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome) VALUES
			('a', 'k1', 100, 'schedule', 1, 'success'),
			('a', 'manual:1', 900, 'manual', 1, 'success'),
			('a', 'k0', 50, 'schedule', 1, 'missed'),
			('b', 'manual:2', 70, 'manual', 1, 'success')`, latestMigration-1)); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	old, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := map[string]int64{"a": 3, "b": 4}
	wantSlots := map[string]time.Time{"a": time.Unix(0, 100)}
	if got := latestIDs(t, old, []string{"a", "b"}); !reflect.DeepEqual(got, wantIDs) {
		t.Errorf("read-only, unmigrated: latest runs %v, want %v", got, wantIDs)
	}
	if got := lastSlots(t, old); !reflect.DeepEqual(got, wantSlots) {
		t.Errorf("read-only, unmigrated: last slots %v, want %v", got, wantSlots)
	}
	_ = old.Close()

	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if got := latestIDs(t, j, []string{"a", "b"}); !reflect.DeepEqual(got, wantIDs) {
		t.Errorf("migrated: latest runs %v, want %v", got, wantIDs)
	}
	if got := lastSlots(t, j); !reflect.DeepEqual(got, wantSlots) {
		t.Errorf("migrated: last slots %v, want %v", got, wantSlots)
	}
}
