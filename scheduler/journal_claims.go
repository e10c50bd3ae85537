package scheduler

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// claim is one slot claim: the row written before a run's side effects start.
type claim struct {
	Routine string
	Slot    time.Time
	Key     string // slotKey(Slot), or "manual:<request id>"
	Trigger string
	Outcome string // OutcomeRunning for a run; skipped/missed for a slot that will not run
	Reason  string
	Started time.Time
	LateBy  time.Duration
}

// slotKey is the journal key of a scheduled slot: the instant in RFC 3339 UTC. Calendar slots
// are produced once per wall-clock time (schedule.go), so the key is one per wall time too.
func slotKey(slot time.Time) string { return slot.UTC().Format(time.RFC3339Nano) }

// Claim inserts c under UNIQUE(routine, slot key) with the writer's epoch and returns the run id.
// A scheduled slot at or before the routine's latest scheduled slot that ran is refused too, so
// a backward clock jump never re-fires a slot, even one whose row retention has deleted.
// (Skipped and missed rows do not count: overlap=queue runs an older slot after a newer skip.)
// Claims arriving together are committed in one transaction (group commit, one fsync), so 100
// routines due in the same second do not queue behind 100 fsyncs. Errors: ErrSlotClaimed when
// the slot (or a later one) is already claimed; ErrFenced when a newer epoch is recorded or
// Acquire was not called; ErrJournalClosed after Close.
func (j *Journal) Claim(c claim) (int64, error) {
	epoch := j.epoch.Load()
	if c.Key == "" {
		c.Key = slotKey(c.Slot)
	}
	if j.readOnly {
		return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, ErrReadOnly)
	}
	if epoch == 0 {
		return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, ErrFenced)
	}
	req := claimReq{c: c, epoch: epoch, resp: make(chan claimResp, 1)}
	select {
	case j.claimQueue <- req:
	case <-j.closed:
		return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, errJournalClosed)
	}
	r := <-req.resp
	if r.err != nil {
		return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, r.err)
	}
	return r.id, nil
}

// claimReq is one claim waiting for the writer.
type claimReq struct {
	c     claim
	epoch uint64
	resp  chan claimResp
}

type claimResp struct {
	id  int64
	err error
}

// insertClaims inserts every claim that is not fenced (a newer epoch exists), not a duplicate
// (UNIQUE routine, slot key) and not behind its routine's high-water mark (claimInsert), in one
// statement, and fills resps: the run id, or ErrFenced / ErrSlotClaimed.
func insertClaims(q querier, claims []claimReq, resps []claimResp) error {
	if len(claims) == 0 {
		return nil
	}
	var rows []string
	var args []any
	index := map[string]int{}
	for i, c := range claims {
		k := c.c.Routine + "\x00" + c.c.Key
		if _, dup := index[k]; dup {
			resps[i].err = ErrSlotClaimed
			continue
		}
		index[k] = i
		started, finished := c.c.times()
		rows = append(rows, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, c.c.Routine, c.c.Key, c.c.Slot.UnixNano(), c.c.Trigger, c.epoch, c.c.Outcome,
			c.c.Reason, started, finished, int64(c.c.LateBy), bypassesHighWater(c.c))
		resps[i].err = ErrSlotClaimed // until the insert returns its row
	}
	if len(rows) == 0 {
		return nil
	}
	stmt := `INSERT OR IGNORE INTO runs (routine, slot_key, slot, trigger, epoch, outcome, reason, started, finished, late_by)
		SELECT column1, column2, column3, column4, column5, column6, column7, column8, column9, column10
		FROM (VALUES ` + strings.Join(rows, ", ") + `) AS v
		WHERE NOT EXISTS (SELECT 1 FROM epochs WHERE epoch > v.column5)
			AND (v.column11 OR NOT EXISTS (SELECT 1 FROM runs r WHERE r.routine = v.column1 AND r.trigger != ?
				AND r.slot >= v.column3 AND r.outcome NOT IN (?, ?)))
		RETURNING id, routine, slot_key`
	args = append(args, TriggerManual, OutcomeSkipped, OutcomeMissed)
	res, err := q.Query(stmt, args...)
	if err != nil {
		return err
	}
	defer func() { _ = res.Close() }()
	for res.Next() {
		var id int64
		var routine, key string
		if err := res.Scan(&id, &routine, &key); err != nil {
			return err
		}
		if i, ok := index[routine+"\x00"+key]; ok {
			resps[i] = claimResp{id: id}
		}
	}
	if err := res.Err(); err != nil {
		return err
	}
	_ = res.Close()
	// Say why the refused ones were refused: a newer epoch, or the slot ran already. (All
	// claims of a batch carry the same epoch but the check is per claim and costs one query.)
	var maxE *uint64
	for i, c := range claims {
		if resps[i].id != 0 || !errors.Is(resps[i].err, ErrSlotClaimed) {
			continue
		}
		if maxE == nil {
			m, err := maxEpoch(q)
			if err != nil {
				return err
			}
			maxE = &m
		}
		if err := fencedBy(*maxE, c.epoch); err != nil {
			resps[i].err = err
		}
	}
	return nil
}

// times returns the claim's started and finished columns (unix ns or NULL): a slot that will
// not run (skipped, missed) is finished when it is recorded.
func (c claim) times() (started, finished any) {
	if !c.Started.IsZero() {
		started = c.Started.UnixNano()
	}
	if c.Outcome != OutcomeRunning {
		finished = started
	}
	return started, finished
}

// maxEpoch returns the highest owner epoch recorded (0 for none).
func maxEpoch(q querier) (uint64, error) {
	var e int64
	if err := q.QueryRow(`SELECT COALESCE(MAX(epoch), 0) FROM epochs`).Scan(&e); err != nil {
		return 0, err
	}
	return uint64(e), nil
}

// fencedBy returns an error wrapping ErrFenced when a write of epoch meets the recorded maximum
// maxE above it, nil otherwise.
func fencedBy(maxE, epoch uint64) error {
	if maxE > epoch {
		return fmt.Errorf("epoch %d, recorded %d: %w", epoch, maxE, ErrFenced)
	}
	return nil
}

// bypassesHighWater reports whether c is exempt from the "no slot behind the latest run" rule.
// That rule exists so a backward clock jump never re-fires a slot; a manual run has its own key,
// and a skipped or missed row starts nothing, so recording one late is always safe — and needed:
// catch-up writes its missed rows while the first timer of the new owner may already have
// claimed a later slot, and refusing them would drop those slots from the journal silently
// (found by the chaos test, issue 8 "no silent loss").
func bypassesHighWater(c claim) bool {
	return c.Trigger == TriggerManual || c.Outcome == OutcomeSkipped || c.Outcome == OutcomeMissed
}

// querier is a *sql.Tx or a *sql.DB.
type querier interface {
	Exec(query string, args ...any) (sql.Result, error)
	Query(query string, args ...any) (*sql.Rows, error)
	QueryRow(query string, args ...any) *sql.Row
}

// claimInsert is the single-claim form of insertClaims' statement.
const claimInsert = `INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome, reason, started, finished, late_by)
	SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
	WHERE NOT EXISTS (SELECT 1 FROM epochs WHERE epoch > ?)
		AND (? OR NOT EXISTS (SELECT 1 FROM runs WHERE routine = ? AND trigger != ? AND slot >= ? AND outcome NOT IN (?, ?)))`

// insertClaim inserts one claim with claimInsert; the errors are those of insertClaims.
func insertClaim(q querier, req claimReq) (int64, error) {
	c := req.c
	started, finished := c.times()
	res, err := q.Exec(claimInsert, c.Routine, c.Key, c.Slot.UnixNano(), c.Trigger, req.epoch, c.Outcome, c.Reason,
		started, finished, int64(c.LateBy), req.epoch, bypassesHighWater(c), c.Routine, TriggerManual,
		c.Slot.UnixNano(), OutcomeSkipped, OutcomeMissed)
	if err != nil {
		if isUnique(err) {
			return 0, ErrSlotClaimed
		}
		return 0, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		maxE, err := maxEpoch(q)
		if err != nil {
			return 0, err
		}
		if err := fencedBy(maxE, req.epoch); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("a later slot is claimed: %w", ErrSlotClaimed)
	}
	return res.LastInsertId()
}

// claimAll records cs, slots that will not run (skipped or missed), in one transaction of the
// writer (one fsync however many). It returns per claim nil or why it was refused (ErrSlotClaimed:
// already recorded; ErrFenced: a newer owner). Errors: ErrReadOnly, the closed journal, or the
// transaction's error (then nothing was recorded), wrapped.
func (j *Journal) claimAll(cs []claim) ([]error, error) {
	epoch := j.epoch.Load()
	if epoch == 0 {
		return nil, fmt.Errorf("record %d slots: %w", len(cs), ErrFenced)
	}
	reqs := make([]claimReq, len(cs))
	for i, c := range cs {
		if c.Key == "" {
			c.Key = slotKey(c.Slot)
		}
		reqs[i] = claimReq{c: c, epoch: epoch}
	}
	resps := make([]claimResp, len(cs))
	if err := j.write(func(tx *sql.Tx) error { return insertClaims(tx, reqs, resps) }); err != nil {
		return nil, fmt.Errorf("record %d slots: %w", len(cs), err)
	}
	errs := make([]error, len(cs))
	for i, r := range resps {
		errs[i] = r.err
	}
	return errs, nil
}
