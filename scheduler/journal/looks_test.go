package journal

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQuickLooksUseIndexes checks the query plans of the statements behind status, routines and
// history: none may sort the runs table or scan it filtered by routine, either of which makes a
// look cost as much as the journal is big.
func TestQuickLooksUseIndexes(t *testing.T) {
	cols := runColumns + "device"
	checkPlans(t, map[string]string{"history": fmt.Sprintf(historySQL, cols),
		"history of a routine": fmt.Sprintf(historyOfSQL, cols), "latest runs": fmt.Sprintf(latestRunsSQL, cols),
		"latest runs before latest": fmt.Sprintf(latestRunsBeforeSQL, cols)},
		map[string][]any{"history": {50}, "history of a routine": {"a", 50}, "latest runs": {`["a","b"]`},
			"latest runs before latest": {`["a","b"]`}}, "history")
}

// TestStartQueriesUseIndexes checks the query plans of the statements an owner runs at start
// over every routine: none may scan the runs table (a million runs took seconds that way).
func TestStartQueriesUseIndexes(t *testing.T) {
	checkPlans(t, map[string]string{"last slots": lastSlotsSQL, "last slots before latest": lastSlotsBeforeSQL,
		"latest backfill": routineNames + latestBackfillSQL,
		"recent outcomes": allRecentOutcomesSQL, "last slot": `SELECT (` + lastSlotOf + `)`},
		map[string][]any{"last slots before latest": {"manual"}, "recent outcomes": {"a", "b", "c", "d", 5}, "last slot": {"a", "manual"}}, "")
}

// checkPlans fails t when the plan of a statement of queries (run with args[name]) sorts runs,
// or scans it unless the statement is named mayScan (one that reads it in id order and stops).
func checkPlans(t *testing.T, queries map[string]string, args map[string][]any, mayScan string) {
	t.Helper()
	j := acquiredJournal(t)
	for name, q := range queries {
		args := args[name]
		rows, err := j.db.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, " / ")
		if strings.Contains(all, "TEMP B-TREE FOR ORDER BY") && name != "recent outcomes" || (name != mayScan && strings.Contains(all, "SCAN runs")) {
			t.Errorf("%s: plan %q reads the whole runs table", name, all)
		}
	}
}

// TestLatestRunsAndHistoryOfRoutine checks that LatestRuns returns each routine's newest run
// and leaves out routines without any, and that History of one routine returns only its runs,
// newest first.
func TestLatestRunsAndHistoryOfRoutine(t *testing.T) {
	j := acquiredJournal(t)
	for i := range 9 {
		r := []string{"a", "b", "c"}[i%3]
		if r == "c" {
			r = "a"
		}
		if _, err := j.Claim(Claim{Routine: r, Slot: time.Unix(int64(1000+i), 0), Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := j.LatestRuns([]string{"a", "b", "never"})
	if err != nil {
		t.Fatal(err)
	}
	if len(latest) != 2 || latest["a"].Slot.Unix() != 1008 || latest["b"].Slot.Unix() != 1007 {
		t.Fatalf("latest runs %+v", latest)
	}
	h, err := j.History("b", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 || h[0].Slot.Unix() != 1007 || h[2].Slot.Unix() != 1001 {
		t.Fatalf("history of b: %+v", h)
	}
	for _, r := range h {
		if r.Routine != "b" {
			t.Fatalf("history of b holds a run of %s", r.Routine)
		}
	}
	if all, _ := j.History("", 4); len(all) != 4 || all[0].Slot.Unix() != 1008 {
		t.Fatalf("history of all: %+v", all)
	}
}

// TestRetentionShrinksTheFile checks that a new journal uses incremental auto-vacuum and that
// pruning gives the freed pages back: the database has fewer pages after a big prune.
func TestRetentionShrinksTheFile(t *testing.T) {
	j := acquiredJournal(t)
	var mode int
	if err := j.db.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum = %d (%v), want 2 (incremental)", mode, err)
	}
	big := strings.Repeat("x", 2000)
	for i := range 2000 {
		id, err := j.Claim(Claim{Routine: "a", Slot: time.Unix(int64(1000+i), 0), Trigger: TriggerSchedule, Outcome: OutcomeRunning})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(id, Result{Outcome: OutcomeSuccess, Finished: time.Now(), Output: []byte(big)}); err != nil {
			t.Fatal(err)
		}
	}
	pages := func() (n int) {
		if err := j.db.QueryRow(`PRAGMA page_count`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := pages()
	if err := j.Prune("a", 10); err != nil {
		t.Fatal(err)
	}
	if after := pages(); after > before/4 {
		t.Fatalf("page count %d → %d after pruning 1990 of 2000 runs", before, after)
	}
}

// TestDataVersionMovesOnlyWithCommits checks what the owner's poller relies on to skip its
// queries: DataVersion stays put while nobody writes, and moves when another handle (as another
// process would) or this handle's own writer commits.
func TestDataVersionMovesOnlyWithCommits(t *testing.T) {
	j := acquiredJournal(t)
	v0, err := j.DataVersion()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.History("", 10); err != nil { // reads change nothing
		t.Fatal(err)
	}
	if v, _ := j.DataVersion(); v != v0 {
		t.Fatalf("data_version moved from %d to %d without a commit", v0, v)
	}
	other, err := Open(j.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.RequestRun("a"); err != nil {
		t.Fatal(err)
	}
	v1, _ := j.DataVersion()
	if v1 == v0 {
		t.Fatal("data_version did not move after another handle's commit")
	}
	if _, err := j.Claim(Claim{Routine: "a", Slot: time.Unix(100, 0), Trigger: TriggerSchedule, Outcome: OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	if v, _ := j.DataVersion(); v == v1 {
		t.Fatal("data_version did not move after this handle's own claim")
	}
}

// TestPruneAllKeepsTheNewestOfEachRoutine checks the start's retention over interleaved routines
// and more than one chunk: each routine keeps its newest keep_runs, a running run is never
// deleted, a routine with fewer runs loses none, and the file shrinks.
func TestPruneAllKeepsTheNewestOfEachRoutine(t *testing.T) {
	j := acquiredJournal(t)
	n := 2*pruneChunk + 3000
	if _, err := j.db.Exec(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < ?)
		INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome, output)
		SELECT CASE i % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END, 'k'||i, i, 'schedule', 1,
			CASE WHEN i = 3 THEN 'running' ELSE 'success' END, randomblob(200) FROM c`, n); err != nil {
		t.Fatal(err)
	}
	var before, all int
	_ = j.db.QueryRow(`PRAGMA page_count`).Scan(&before)
	// Past keep_runs by less than minExcess: left to the retention after each run.
	if err := j.PruneAll(map[string]int{"a": 10}, n); err != nil {
		t.Fatal(err)
	}
	if _ = j.db.QueryRow(`SELECT COUNT(*) FROM runs`).Scan(&all); all != n {
		t.Fatalf("%d of %d runs left after a PruneAll with minExcess above the excess", all, n)
	}
	if err := j.PruneAll(map[string]int{"a": 10, "b": 100, "c": n}, 0); err != nil {
		t.Fatal(err)
	}
	count := func(q string, args ...any) (k int) {
		if err := j.db.QueryRow(q, args...).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	if a, b, c := count(`SELECT COUNT(*) FROM runs WHERE routine = 'a'`), count(`SELECT COUNT(*) FROM runs WHERE routine = 'b'`),
		count(`SELECT COUNT(*) FROM runs WHERE routine = 'c'`); a != 11 || b != 100 || c != n/3 {
		t.Fatalf("kept a %d (want 10 and the running one), b %d (want 100), c %d (want all %d)", a, b, c, n/3)
	}
	if count(`SELECT COUNT(*) FROM runs WHERE outcome = 'running'`) != 1 {
		t.Fatal("the running run was deleted")
	}
	if newest := count(`SELECT MIN(slot) FROM (SELECT slot FROM runs WHERE routine = 'b' ORDER BY id DESC LIMIT 100)`); newest != count(`SELECT MIN(slot) FROM runs WHERE routine = 'b'`) {
		t.Fatal("b kept other runs than its newest 100")
	}
	if after := count(`PRAGMA page_count`); after > before*3/4 {
		t.Fatalf("page count %d → %d", before, after)
	}
}

// TestNewJournalWaitsForAReader checks that creating a journal waits, like every other write,
// for a reader that holds the still-empty file (status, or the app's observer, may open it
// at the instant the first owner creates it): without the busy timeout on the auto-vacuum step
// the owner failed at once with SQLITE_BUSY and started "journal unavailable".
func TestNewJournalWaitsForAReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	if err := createPrivate(path); err != nil {
		t.Fatal(err)
	}
	reader, _, err := openReadOnlyDB(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reader.Close() }()
	tx, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil { // takes the shared lock
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = tx.Rollback()
		close(released)
	}()
	j, err := OpenBusy(path, 5*time.Second)
	<-released
	if err != nil {
		t.Fatalf("open while a reader held the empty file for 300 ms: %v", err)
	}
	defer func() { _ = j.Close() }()
	var mode int
	if err := j.db.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum = %d (%v), want 2 (incremental)", mode, err)
	}
}
