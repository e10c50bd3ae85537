package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/routinely/routinely/scheduler/config"
)

// Result is the result of a claimed run.
type Result struct {
	Outcome string
	Reason  string
	// Started, when set, is when the action actually started (the claim recorded when the slot
	// was claimed, up to claimLead before it); LateBy goes with it. Zero: the action never
	// started and the claim's values stay.
	Started  time.Time
	LateBy   time.Duration
	Finished time.Time
	ExitCode *int
	Attempts int
	Summary  string
	Output   []byte // capped to MaxOutput here
}

// Finish records the end of run id. Errors: ErrFenced when a newer epoch is recorded (the run
// stays as the newer owner's Acquire marked it); ErrNoRun when id is unknown.
func (j *Journal) Finish(id int64, f Result) error {
	if len(f.Output) > config.MaxOutput {
		f.Output = f.Output[:config.MaxOutput]
	}
	var exit any
	if f.ExitCode != nil {
		exit = *f.ExitCode
	}
	var started, lateBy any
	if !f.Started.IsZero() {
		started, lateBy = f.Started.UnixNano(), int64(f.LateBy)
	}
	err := j.write1(func(tx *sql.Tx) error {
		res, err := j.inWriter(tx).Exec(`UPDATE runs SET outcome = ?, reason = ?, finished = ?, exit_code = ?, attempts = ?,
			summary = ?, output = ?, started = COALESCE(?, started), late_by = COALESCE(?, late_by)
			WHERE id = ? AND `+fenced,
			f.Outcome, f.Reason, f.Finished.UnixNano(), exit, f.Attempts, f.Summary, f.Output, started, lateBy,
			id, j.epoch.Load())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var exists bool
			if err := tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`, id).Scan(&exists); err != nil {
				return err
			}
			if exists {
				return ErrFenced
			}
			return ErrNoRun
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish run %d: %w", id, err)
	}
	return nil
}

const runColumns = `id, routine, slot, trigger, epoch, outcome, reason, started, finished, late_by, exit_code, attempts, length(output), `

// runColumns lists the columns scanRun reads: a journal older than deviceMigration (read
// only) has no device column, and reads every device as "".
func (j *Journal) runColumns() string {
	if j.version < deviceMigration {
		return runColumns + `'' AS device`
	}
	return runColumns + `device`
}

// The statements of the quick looks (status, routines, history), with %s for the columns
// (runColumns). Each reads a bounded number of rows through an index, whatever the journal's
// size (TestQuickLooksUseIndexes checks their query plans).
const (
	historySQL    = `SELECT %s FROM runs ORDER BY id DESC LIMIT ?`
	historyOfSQL  = `SELECT %s FROM runs WHERE routine = ? ORDER BY id DESC LIMIT ?`
	latestRunsSQL = `SELECT %s FROM runs WHERE id IN
		(SELECT run_id FROM latest WHERE routine IN (SELECT value FROM json_each(?)))`
	// latestRunsBeforeSQL is latestRunsSQL for a journal before latestMigration.
	latestRunsBeforeSQL = `SELECT %s FROM runs WHERE id IN
		(SELECT (SELECT MAX(id) FROM runs r WHERE r.routine = n.value) FROM json_each(?) n)`
)

// The statements an owner runs at start, over every routine in the journal. A GROUP BY or a
// window over runs reads every row (seconds at a million runs), so they walk the routines with
// routineNames and read each one's few rows through an index (TestStartQueriesUseIndexes).
const (
	// routineNames lists the distinct routines of runs as names(name), one index seek each
	// (a skip-scan of runs_routine_id); its last row is NULL.
	routineNames = `WITH RECURSIVE names(name) AS (
		SELECT (SELECT MIN(routine) FROM runs)
		UNION ALL SELECT (SELECT MIN(routine) FROM runs WHERE routine > name) FROM names WHERE name IS NOT NULL)`
	// lastSlotOf is routine ?'s latest slot of trigger other than ? (runs_routine_slot backwards).
	lastSlotOf   = `SELECT slot FROM runs WHERE routine = ? AND trigger != ? ORDER BY slot DESC LIMIT 1`
	lastSlotsSQL = `SELECT routine, last_slot FROM latest WHERE last_slot IS NOT NULL`
	// lastSlotsBeforeSQL is lastSlotsSQL for a journal before latestMigration (? is
	// TriggerManual).
	lastSlotsBeforeSQL = routineNames + ` SELECT name, slot FROM (SELECT name,
		(SELECT slot FROM runs WHERE routine = name AND trigger != ? ORDER BY slot DESC LIMIT 1) AS slot
		FROM names WHERE name IS NOT NULL) WHERE slot IS NOT NULL`
	allRecentOutcomesSQL = routineNames + ` SELECT r.routine, r.outcome FROM names JOIN runs r ON r.id IN
		(SELECT id FROM runs WHERE routine = names.name AND outcome NOT IN (?, ?, ?, ?) ORDER BY id DESC LIMIT ?)
		WHERE names.name IS NOT NULL ORDER BY r.routine, r.id DESC`
)

func scanRun(row interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var slot, lateBy int64
	var started, finished, exit, size sql.NullInt64
	if err := row.Scan(&r.ID, &r.Routine, &slot, &r.Trigger, &r.Epoch, &r.Outcome, &r.Reason, &started,
		&finished, &lateBy, &exit, &r.Attempts, &size, &r.Device); err != nil {
		return r, err
	}
	r.Slot = time.Unix(0, slot)
	r.Started, r.Finished = nsTime(started), nsTime(finished)
	r.LateBy = time.Duration(lateBy)
	if r.Started != nil && r.Finished != nil {
		r.Duration = r.Finished.Sub(*r.Started)
	}
	if exit.Valid {
		code := int(exit.Int64)
		r.ExitCode = &code
	}
	r.OutputSize = int(size.Int64)
	return r, nil
}

// History returns up to limit runs, newest first; routine "" means all routines. limit <= 0
// means no limit. Errors: the query error, wrapped.
func (j *Journal) History(routine string, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = -1
	}
	// Two statements, not one with "(? = '' OR routine = ?)": SQLite plans a statement once, so
	// that form cannot use runs_routine_id and scans every row for a routine with few runs.
	q, args := historySQL, []any{limit}
	if routine != "" {
		q, args = historyOfSQL, []any{routine, limit}
	}
	rows, err := j.db.Query(fmt.Sprintf(q, j.runColumns()), args...)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LatestRuns returns the newest run (highest id) of each of routines that has one, by routine
// name, in one statement: each routine's newest id comes from the latest table (a journal
// before latestMigration: from runs_routine_id), so the cost does not grow with the journal. Errors: the query error, wrapped.
func (j *Journal) LatestRuns(routines []string) (map[string]Run, error) {
	out := map[string]Run{}
	if len(routines) == 0 {
		return out, nil
	}
	names, err := json.Marshal(routines)
	if err != nil {
		return nil, fmt.Errorf("latest runs: %w", err)
	}
	query := latestRunsSQL
	if j.version < latestMigration {
		query = latestRunsBeforeSQL
	}
	rows, err := j.db.Query(fmt.Sprintf(query, j.runColumns()), string(names))
	if err != nil {
		return nil, fmt.Errorf("latest runs: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("latest runs: %w", err)
		}
		out[r.Routine] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest runs: %w", err)
	}
	return out, nil
}

// Run returns one run by id. Errors: ErrNoRun if unknown.
func (j *Journal) Run(id int64) (Run, error) {
	r, err := scanRun(j.db.QueryRow(`SELECT `+j.runColumns()+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %d: %w", id, ErrNoRun)
	}
	if err != nil {
		return r, fmt.Errorf("run %d: %w", id, err)
	}
	return r, nil
}

// Output returns a run's captured output (at most MaxOutput bytes). Errors: ErrNoRun if unknown.
func (j *Journal) Output(runID int64) ([]byte, error) {
	var out []byte
	err := j.db.QueryRow(`SELECT output FROM runs WHERE id = ?`, runID).Scan(&out)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("output of run %d: %w", runID, ErrNoRun)
	}
	if err != nil {
		return nil, fmt.Errorf("output of run %d: %w", runID, err)
	}
	return out, nil
}

// LastSlot returns the latest claimed scheduled (non-manual) slot of routine, zero if none.
// Errors: the query error, wrapped.
func (j *Journal) LastSlot(routine string) (time.Time, error) {
	var ns sql.NullInt64
	if err := j.db.QueryRow(`SELECT (`+lastSlotOf+`)`, routine, TriggerManual).Scan(&ns); err != nil {
		return time.Time{}, fmt.Errorf("last slot of %s: %w", routine, err)
	}
	if !ns.Valid {
		return time.Time{}, nil
	}
	return time.Unix(0, ns.Int64), nil
}

// LastSlots returns every routine's latest claimed scheduled (non-manual) slot in one query.
// Errors: the query error, wrapped.
func (j *Journal) LastSlots() (map[string]time.Time, error) {
	var rows *sql.Rows
	var err error
	if j.version < latestMigration {
		rows, err = j.db.Query(lastSlotsBeforeSQL, TriggerManual)
	} else {
		rows, err = j.db.Query(lastSlotsSQL)
	}
	if err != nil {
		return nil, fmt.Errorf("last slots: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]time.Time{}
	for rows.Next() {
		var name string
		var ns int64
		if err := rows.Scan(&name, &ns); err != nil {
			return nil, fmt.Errorf("last slots: %w", err)
		}
		out[name] = time.Unix(0, ns)
	}
	return out, rows.Err()
}

// AllRecentOutcomes returns, per routine, its latest n outcomes of runs that ran (newest first).
// Errors: the query error, wrapped.
func (j *Journal) AllRecentOutcomes(n int) (map[string][]string, error) {
	rows, err := j.db.Query(allRecentOutcomesSQL, OutcomeRunning, OutcomeSkipped, OutcomeMissed, OutcomeInterrupted, n)
	if err != nil {
		return nil, fmt.Errorf("recent outcomes: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string][]string{}
	for rows.Next() {
		var name, o string
		if err := rows.Scan(&name, &o); err != nil {
			return nil, fmt.Errorf("recent outcomes: %w", err)
		}
		out[name] = append(out[name], o)
	}
	return out, rows.Err()
}

// RecentOutcomes returns routine's latest n outcomes of runs that ran (newest first).
// Errors: the query error, wrapped.
func (j *Journal) RecentOutcomes(routine string, n int) ([]string, error) {
	rows, err := j.db.Query(`SELECT outcome FROM runs WHERE routine = ? AND outcome NOT IN (?, ?, ?, ?)
		ORDER BY id DESC LIMIT ?`, routine, OutcomeRunning, OutcomeSkipped, OutcomeMissed, OutcomeInterrupted, n)
	if err != nil {
		return nil, fmt.Errorf("recent outcomes of %s: %w", routine, err)
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// pruneEvery spaces one routine's retention passes: a few extra rows for a minute cost
// nothing, a DELETE after every run of an every-second routine costs write time.
const pruneEvery = time.Minute

// PruneLater deletes routine's runs beyond the newest keep in a background goroutine (one at a
// time per routine), so retention never blocks a run. The row holding the routine's latest
// scheduled slot is always kept: it is the high-water mark that stops re-firing.
func (j *Journal) PruneLater(routine string, keep int) {
	j.pruneMu.Lock()
	if j.pruning[routine] || time.Since(j.pruned[routine]) < pruneEvery {
		j.pruneMu.Unlock()
		return
	}
	j.pruning[routine] = true
	j.pruned[routine] = time.Now()
	j.pruneWG.Add(1)
	j.pruneMu.Unlock()
	go func() {
		defer j.pruneWG.Done()
		defer func() {
			j.pruneMu.Lock()
			delete(j.pruning, routine)
			j.pruneMu.Unlock()
		}()
		_ = j.Prune(routine, keep)
	}()
}

// pruneChunk is how many runs one transaction of PruneAll deletes at most: the writer (and so
// the claims) waits for one chunk, never for the whole clean-up of a big journal.
const pruneChunk = 20000

// PruneAllLater runs PruneAll(keep, minExcess) in a background goroutine (Close waits for it).
// The owner calls it once at start.
func (j *Journal) PruneAllLater(keep map[string]int, minExcess int) {
	j.pruneWG.Add(1)
	go func() {
		defer j.pruneWG.Done()
		_ = j.PruneAll(keep, minExcess)
	}()
}

// PruneAll is Prune for every routine of keep (routine → keep_runs) at once, for a journal that
// holds far more runs than it keeps (keep_runs was lowered, or a journal grew elsewhere). Prune
// deletes one routine's runs, which are spread over every page of the table, so pruning 50
// routines of a million-run journal one by one rewrites the whole table 50 times; PruneAll
// deletes in id order, all routines together, pruneChunk runs per transaction, each followed by
// an incremental vacuum. The rules are Prune's: the newest keep runs, running runs and each
// routine's high-water row stay. A routine with fewer than keep_runs + minExcess runs is left
// to Prune after its next run (a few extra rows cost nothing). Errors: a read's or a write's,
// wrapped.
func (j *Journal) PruneAll(keep map[string]int, minExcess int) error {
	type bound struct {
		routine     string
		below, slot int64 // delete ids below, slots below
	}
	var bounds []bound
	for _, routine := range slices.Sorted(maps.Keys(keep)) {
		var below, slot sql.NullInt64
		var excess int
		err := j.db.QueryRow(`SELECT COUNT(*) FROM (SELECT 1 FROM runs WHERE routine = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
			routine, keep[routine]+max(minExcess, 0)-1).Scan(&excess)
		if err == nil && excess == 0 {
			continue // keep_runs + minExcess or fewer
		}
		if err == nil {
			err = j.db.QueryRow(`SELECT id FROM runs WHERE routine = ? ORDER BY id DESC LIMIT 1 OFFSET ?`, routine, keep[routine]-1).Scan(&below)
		}
		if err == nil {
			err = j.db.QueryRow(`SELECT (SELECT slot FROM runs WHERE routine = ? AND trigger != ? AND outcome NOT IN (?, ?) ORDER BY slot DESC LIMIT 1)`,
				routine, TriggerManual, OutcomeSkipped, OutcomeMissed).Scan(&slot)
		}
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		if !slot.Valid {
			slot.Int64 = math.MaxInt64
		}
		bounds = append(bounds, bound{routine, below.Int64, slot.Int64})
	}
	if len(bounds) == 0 {
		return nil
	}
	for after := int64(0); ; {
		var deleted int64
		err := j.write(func(tx *sql.Tx) error {
			if _, err := tx.Exec(`CREATE TEMP TABLE IF NOT EXISTS prune_bounds (routine TEXT PRIMARY KEY, below INTEGER, slot INTEGER)`); err != nil {
				return err
			}
			if _, err := tx.Exec(`DELETE FROM temp.prune_bounds`); err != nil {
				return err
			}
			for _, b := range bounds {
				if _, err := tx.Exec(`INSERT INTO temp.prune_bounds VALUES (?, ?, ?)`, b.routine, b.below, b.slot); err != nil {
					return err
				}
			}
			// CROSS JOIN keeps runs the outer loop, read in id order from after: the chunk is
			// the oldest prunable runs, found without sorting.
			if err := tx.QueryRow(`SELECT COALESCE(MAX(id), 0), COUNT(*) FROM (SELECT r.id FROM runs r CROSS JOIN temp.prune_bounds b
				ON b.routine = r.routine WHERE r.id > ? AND r.id < b.below AND r.slot < b.slot AND r.outcome != ?
				ORDER BY r.id LIMIT ?)`, after, OutcomeRunning, pruneChunk).Scan(&after, &deleted); err != nil {
				return err
			}
			if deleted == 0 {
				return nil
			}
			if _, err := tx.Exec(`DELETE FROM runs WHERE id IN (SELECT r.id FROM runs r CROSS JOIN temp.prune_bounds b
				ON b.routine = r.routine WHERE r.id <= ? AND r.id < b.below AND r.slot < b.slot AND r.outcome != ?)`, after, OutcomeRunning); err != nil {
				return err
			}
			_, err := tx.Exec(fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, vacuumPages))
			return err
		})
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		if deleted < pruneChunk {
			return nil
		}
	}
}

// vacuumPages is how many free pages (4 KiB each) one retention pass gives back to the file
// system at most: a pass after a big deletion then holds the writer for milliseconds, not for
// as long as rewriting the whole file would take, and later passes give back the rest.
const vacuumPages = 4096

// Prune deletes routine's runs older than the newest keep (never a running one), then gives up
// to vacuumPages free pages back to the file system (a journal created before incremental
// auto-vacuum keeps them for reuse instead). Errors: the write error, wrapped.
func (j *Journal) Prune(routine string, keep int) error {
	// A read through runs_routine_id first: with keep runs or fewer there is nothing to delete,
	// and no write transaction (an fsync, the journal's write lock) is spent on it.
	var beyond int
	err := j.db.QueryRow(`SELECT COUNT(*) FROM (SELECT 1 FROM runs WHERE routine = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`, routine, keep).Scan(&beyond)
	if err != nil {
		return fmt.Errorf("prune %s: %w", routine, err)
	}
	if beyond == 0 {
		return nil
	}
	err = j.write(func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM runs WHERE routine = ? AND outcome != ?
		AND id < (SELECT id FROM runs WHERE routine = ? ORDER BY id DESC LIMIT 1 OFFSET ?)
		AND slot < (SELECT COALESCE(MAX(slot), 9223372036854775807) FROM runs WHERE routine = ? AND trigger != ? AND outcome NOT IN (?, ?))`,
			routine, OutcomeRunning, routine, keep-1, routine, TriggerManual, OutcomeSkipped, OutcomeMissed)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		_, err = tx.Exec(fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, vacuumPages))
		return err
	})
	if err != nil {
		return fmt.Errorf("prune %s: %w", routine, err)
	}
	return nil
}
