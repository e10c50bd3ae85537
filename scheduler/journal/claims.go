package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Claim is one slot claim: the row written before a run's side effects start.
type Claim struct {
	Routine string
	Slot    time.Time
	Key     string // slotKey(Slot), or "manual:<request id>"
	Trigger string
	Outcome string // OutcomeRunning for a run; skipped/missed for a slot that will not run
	Reason  string
	Started time.Time
	LateBy  time.Duration
	Device  string // the device that claimed the slot on the hub; "" without a hub
}

// SlotKey is the journal key of a scheduled slot: the instant in RFC 3339 UTC. Calendar slots
// are produced once per wall-clock time (schedule.go), so the key is one per wall time too.
func SlotKey(slot time.Time) string { return slot.UTC().Format(time.RFC3339Nano) }

// Claim inserts c under UNIQUE(routine, slot key) with the writer's epoch and returns the run id.
// A scheduled slot at or before the routine's latest scheduled slot that ran is refused too, so
// a backward clock jump never re-fires a slot, even one whose row retention has deleted.
// (Skipped and missed rows do not count: overlap=queue runs an older slot after a newer skip.)
// (claimSQL states the rule.) Claims arriving together are committed in one transaction (group
// commit, one fsync), so 100 routines due in the same second do not queue behind 100 fsyncs;
// they are decided in the order they arrived, exactly as one at a time. Errors: ErrSlotClaimed
// when the slot (or a later one) is already claimed; ErrFenced when a newer epoch is recorded or
// Acquire was not called; ErrReadOnly for a journal opened read-only; ErrReplaced (wrapped,
// from Intact) for a run's claim (outcome running) while journal.db on disk is not the file this
// handle has open; the journal-closed error after Close; the commit's error, wrapped.
func (j *Journal) Claim(c Claim) (int64, error) {
	epoch := j.epoch.Load()
	if c.Key == "" {
		c.Key = SlotKey(c.Slot)
	}
	if j.readOnly {
		return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, ErrReadOnly)
	}
	if epoch == 0 {
		return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, ErrFenced)
	}
	if c.Outcome == OutcomeRunning {
		// A run starts only on a claim in journal.db on disk: one written to a deleted file is
		// gone at the next start, and nothing would stop that slot from running again.
		if err := j.Intact(); err != nil {
			return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, err)
		}
	}
	req := claimReq{c: c, epoch: epoch, resp: make(chan claimResp, 1)}
	select {
	case j.claimQueue <- req:
	case <-j.closed:
		return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, ErrClosed)
	}
	r := <-req.resp
	if r.err != nil {
		return 0, fmt.Errorf("claim %s %s: %w", c.Routine, c.Key, r.err)
	}
	return r.id, nil
}

// claimReq is one claim waiting for the writer.
type claimReq struct {
	c     Claim
	epoch uint64
	resp  chan claimResp
}

type claimResp struct {
	id  int64
	err error
}

// insertClaims decides claims in order, each with insertClaim, inside the caller's transaction,
// and fills resps: the run id, or the refusal (ErrFenced, ErrSlotClaimed). A claim sees every
// claim before it, those of the same transaction included, so a batch decides exactly as the
// same claims made one at a time would. Errors: the first that is not a refusal (the statement
// or query error); then the transaction must not be committed.
func (j *Journal) insertClaims(tx *sql.Tx, claims []claimReq, resps []claimResp) error {
	for i, req := range claims {
		id, err := insertClaim(j.inWriter(tx), req)
		if err != nil && !errors.Is(err, ErrSlotClaimed) && !errors.Is(err, ErrFenced) {
			return err
		}
		resps[i] = claimResp{id: id, err: err}
	}
	return nil
}

// times returns the claim's started and finished columns (unix ns or NULL): a slot that will
// not run (skipped, missed) is finished when it is recorded.
func (c Claim) times() (started, finished any) {
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
// (found by the chaos test's "no silent loss" check).
func bypassesHighWater(c Claim) bool {
	return c.Trigger == TriggerManual || c.Outcome == OutcomeSkipped || c.Outcome == OutcomeMissed
}

// querier is a *sql.Tx, a *sql.DB or a writerQ.
type querier interface {
	Exec(query string, args ...any) (sql.Result, error)
	Query(query string, args ...any) (*sql.Rows, error)
	QueryRow(query string, args ...any) *sql.Row
}

// writerQ is the writer goroutine's querier: its Exec runs through statements the writer
// prepared once (Journal.writerStmt), in tx when tx is set and autocommitted otherwise; Query
// and QueryRow (rare: a refused claim, a finish that updated nothing) prepare as usual.
type writerQ struct {
	j  *Journal
	tx *sql.Tx
}

func (q writerQ) Exec(query string, args ...any) (sql.Result, error) {
	st, err := q.j.writerStmt(query)
	if err != nil {
		return nil, err
	}
	if q.tx != nil {
		// The transaction's connection reuses the statement when it was prepared on it already
		// (database/sql Tx.Stmt), and the returned one is closed with the transaction.
		st = q.tx.Stmt(st)
	}
	return st.Exec(args...)
}

func (q writerQ) Query(query string, args ...any) (*sql.Rows, error) {
	if q.tx != nil {
		return q.tx.Query(query, args...)
	}
	return q.j.db.Query(query, args...)
}

func (q writerQ) QueryRow(query string, args ...any) *sql.Row {
	if q.tx != nil {
		return q.tx.QueryRow(query, args...)
	}
	return q.j.db.QueryRow(query, args...)
}

// claimSQL is the claim rule, the one statement every claim is written with. It inserts the
// claim's row unless
//   - a newer epoch is recorded: the claim is fenced; or
//   - the claim does not bypass the high-water rule (bypassesHighWater) and its routine has a
//     scheduled run at this slot or a later one (manual runs and skipped or missed rows do not
//     count), so a backward clock jump never re-fires a slot, even one whose row retention has
//     deleted.
//
// A second row for one (routine, slot key) fails the table's UNIQUE constraint. It is a plain
// INSERT, not INSERT OR IGNORE, so that error tells a duplicate apart.
const claimSQL = `INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome, reason, started, finished, late_by, device)
	SELECT :routine, :key, :slot, :trigger, :epoch, :outcome, :reason, :started, :finished, :late_by, :device
	WHERE NOT EXISTS (SELECT 1 FROM epochs WHERE epoch > :epoch)
		AND (:bypass OR NOT EXISTS (SELECT 1 FROM runs WHERE routine = :routine AND trigger != :manual
			AND slot >= :slot AND outcome NOT IN (:skipped, :missed)))`

// claimArgs returns claimSQL's arguments for req: its row, stamped with req's epoch.
func claimArgs(req claimReq) []any {
	c := req.c
	started, finished := c.times()
	return []any{
		sql.Named("routine", c.Routine), sql.Named("key", c.Key), sql.Named("slot", c.Slot.UnixNano()),
		sql.Named("trigger", c.Trigger), sql.Named("epoch", req.epoch), sql.Named("outcome", c.Outcome),
		sql.Named("reason", c.Reason), sql.Named("started", started), sql.Named("finished", finished),
		sql.Named("late_by", int64(c.LateBy)), sql.Named("device", c.Device), sql.Named("bypass", bypassesHighWater(c)),
		sql.Named("manual", TriggerManual), sql.Named("skipped", OutcomeSkipped), sql.Named("missed", OutcomeMissed),
	}
}

// insertClaim writes req with claimSQL through q (the journal's database for a claim alone, the
// writer's transaction for a batch) and returns the new run id. Errors: ErrFenced (wrapped) when
// a newer epoch is recorded; ErrSlotClaimed when the slot key is taken already (UNIQUE), or
// wrapped when the high-water rule refuses it; the statement or query error.
func insertClaim(q querier, req claimReq) (int64, error) {
	res, err := q.Exec(claimSQL, claimArgs(req)...)
	if err != nil {
		if isUnique(err) {
			return 0, ErrSlotClaimed
		}
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if n == 0 {
		maxE, err := maxEpoch(q)
		if err != nil {
			return 0, err
		}
		if err := fencedBy(maxE, req.epoch); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("this slot or a later one is claimed: %w", ErrSlotClaimed)
	}
	return res.LastInsertId()
}

// ClaimAll records cs, slots that will not run (skipped or missed), in one transaction of the
// writer (one fsync however many). It returns per claim nil or why it was refused (ErrSlotClaimed:
// already recorded; ErrFenced: a newer owner). Errors: ErrReadOnly, the closed journal, or the
// transaction's error (then nothing was recorded), wrapped.
func (j *Journal) ClaimAll(cs []Claim) ([]error, error) {
	epoch := j.epoch.Load()
	if epoch == 0 {
		return nil, fmt.Errorf("record %d slots: %w", len(cs), ErrFenced)
	}
	reqs := make([]claimReq, len(cs))
	for i, c := range cs {
		if c.Key == "" {
			c.Key = SlotKey(c.Slot)
		}
		reqs[i] = claimReq{c: c, epoch: epoch}
	}
	resps := make([]claimResp, len(cs))
	if err := j.write(func(tx *sql.Tx) error { return j.insertClaims(tx, reqs, resps) }); err != nil {
		return nil, fmt.Errorf("record %d slots: %w", len(cs), err)
	}
	errs := make([]error, len(cs))
	for i, r := range resps {
		errs[i] = r.err
	}
	return errs, nil
}
