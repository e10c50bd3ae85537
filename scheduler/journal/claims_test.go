package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// claimPaths are the ways a claim reaches the journal. Each takes claims to decide in order and
// returns, per claim, the run id (0 when refused) and the refusal.
var claimPaths = []struct {
	name  string
	claim func(t *testing.T, j *Journal, cs []Claim) []claimResp
}{
	{"one at a time", func(t *testing.T, j *Journal, cs []Claim) []claimResp {
		out := make([]claimResp, len(cs))
		for i, c := range cs {
			req := claimReqOf(j, c)
			j.commitBatch([]claimReq{req}, nil) // a claim alone: one autocommitted statement
			out[i] = <-req.resp
		}
		return out
	}},
	{"group commit", func(t *testing.T, j *Journal, cs []Claim) []claimResp {
		reqs := make([]claimReq, len(cs))
		for i, c := range cs {
			reqs[i] = claimReqOf(j, c)
		}
		// With another write waiting, even a single claim is committed in a transaction.
		other := writeReq{fn: func(*sql.Tx) error { return nil }, one: true, resp: make(chan error, 1)}
		j.commitBatch(reqs, []writeReq{other})
		out := make([]claimResp, len(cs))
		for i, req := range reqs {
			out[i] = <-req.resp
		}
		return out
	}},
	{"claimAll", func(t *testing.T, j *Journal, cs []Claim) []claimResp {
		errs, err := j.ClaimAll(cs) // reports refusals only; the rows written are checked below
		if err != nil {
			t.Fatalf("claimAll: %v", err)
		}
		out := make([]claimResp, len(cs))
		for i, err := range errs {
			out[i].err = err
		}
		return out
	}},
}

func claimReqOf(j *Journal, c Claim) claimReq {
	if c.Key == "" {
		c.Key = SlotKey(c.Slot)
	}
	return claimReq{c: c, epoch: j.epoch.Load(), resp: make(chan claimResp, 1)}
}

// The claim rule (claimSQL), decided the same whichever path a claim takes: alone, in a group
// commit with other claims and writes, or through claimAll (the slots recorded after a journal
// outage). Claims of one row are decided in order, each seeing those before it, even inside
// one transaction.
func TestClaimRule(t *testing.T) {
	t0 := time.Unix(30_000, 0)
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	run := func(routine string, slot time.Time) Claim {
		return Claim{Routine: routine, Slot: slot, Trigger: TriggerSchedule, Outcome: OutcomeRunning, Started: slot}
	}
	done := func(routine string, slot time.Time) Claim {
		c := run(routine, slot)
		c.Outcome = OutcomeSuccess
		return c
	}
	rec := func(outcome string, routine string, slot time.Time) Claim { // a slot that will not run
		return Claim{Routine: routine, Slot: slot, Trigger: TriggerCatchUp, Outcome: outcome, Reason: "test", Started: at(9)}
	}
	manual := func(routine string, request int, at time.Time) Claim {
		return Claim{Routine: routine, Slot: at, Key: fmt.Sprintf("manual:%d", request), Trigger: TriggerManual,
			Outcome: OutcomeRunning, Started: at}
	}
	tests := []struct {
		name   string
		before []Claim // claimed first, one at a time
		newer  bool    // then a newer owner (epoch 2) acquires the journal
		claims []Claim // decided in this order, by epoch 1
		want   []error // nil: claimed, with a new run id
	}{
		{name: "new slot", claims: []Claim{run("a", t0)}, want: []error{nil}},
		{name: "duplicate", before: []Claim{done("a", t0)},
			claims: []Claim{run("a", t0)}, want: []error{ErrSlotClaimed}},
		{name: "duplicate of a missed row", before: []Claim{rec(OutcomeMissed, "a", t0)},
			claims: []Claim{run("a", t0)}, want: []error{ErrSlotClaimed}},
		{name: "behind the latest run", before: []Claim{done("a", at(1))},
			claims: []Claim{run("a", t0)}, want: []error{ErrSlotClaimed}},
		{name: "after the latest run", before: []Claim{done("a", t0)},
			claims: []Claim{run("a", at(1))}, want: []error{nil}},
		{name: "behind another routine's run", before: []Claim{done("b", at(1))},
			claims: []Claim{run("a", t0)}, want: []error{nil}},
		{name: "behind a skipped row (overlap=queue runs an older slot after a newer skip)",
			before: []Claim{rec(OutcomeSkipped, "a", at(1))}, claims: []Claim{run("a", t0)}, want: []error{nil}},
		{name: "fenced", newer: true, claims: []Claim{run("a", t0)}, want: []error{ErrFenced}},
		{name: "fenced before duplicate", before: []Claim{rec(OutcomeMissed, "a", t0)}, newer: true,
			claims: []Claim{rec(OutcomeMissed, "a", t0)}, want: []error{ErrFenced}},
		{name: "fenced missed row", newer: true,
			claims: []Claim{rec(OutcomeMissed, "a", t0)}, want: []error{ErrFenced}},
		{name: "manual behind the latest run", before: []Claim{done("a", at(60))},
			claims: []Claim{manual("a", 1, t0)}, want: []error{nil}},
		{name: "manual runs at one instant", before: []Claim{done("a", t0)},
			claims: []Claim{manual("a", 1, t0), manual("a", 2, t0)}, want: []error{nil, nil}},
		{name: "manual request twice", claims: []Claim{manual("a", 1, t0), manual("a", 1, at(1))},
			want: []error{nil, ErrSlotClaimed}},
		{name: "manual run is no high-water mark", before: []Claim{manual("a", 1, at(60))},
			claims: []Claim{run("a", t0)}, want: []error{nil}},
		{name: "missed and skipped behind the latest run", before: []Claim{run("a", at(3))},
			claims: []Claim{rec(OutcomeMissed, "a", t0), rec(OutcomeSkipped, "a", at(1))}, want: []error{nil, nil}},
		{name: "missed row twice", claims: []Claim{rec(OutcomeMissed, "a", t0), rec(OutcomeMissed, "a", t0)},
			want: []error{nil, ErrSlotClaimed}},
		{name: "one routine twice, newer slot first", claims: []Claim{run("a", at(1)), run("a", t0)},
			want: []error{nil, ErrSlotClaimed}},
		{name: "one routine twice, older slot first", claims: []Claim{run("a", t0), run("a", at(1))},
			want: []error{nil, nil}},
		{name: "one slot twice", claims: []Claim{run("a", t0), run("a", t0)},
			want: []error{nil, ErrSlotClaimed}},
		{name: "one slot missed, then claimed", claims: []Claim{rec(OutcomeMissed, "a", t0), run("a", t0)},
			want: []error{nil, ErrSlotClaimed}},
		{name: "one routine twice, a run then a missed row behind it",
			claims: []Claim{run("a", at(1)), rec(OutcomeMissed, "a", t0)}, want: []error{nil, nil}},
	}
	for _, p := range claimPaths {
		for _, tc := range tests {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				j := acquiredJournal(t)
				for _, c := range tc.before {
					if _, err := j.Claim(c); err != nil {
						t.Fatalf("claim %+v before: %v", c, err)
					}
				}
				if tc.newer {
					acquireNewer(t, j.path, 2)
				}
				before := journalRows(t, j)
				got := p.claim(t, j, tc.claims)
				var wantRows []string
				for i, c := range tc.claims {
					r := got[i]
					switch {
					case tc.want[i] == nil && r.err != nil:
						t.Errorf("claim %d (%s %v %s): %v, want it claimed", i, c.Routine, c.Slot, c.Outcome, r.err)
					case tc.want[i] != nil && !errors.Is(r.err, tc.want[i]):
						t.Errorf("claim %d (%s %v %s): id %d, err %v; want %v", i, c.Routine, c.Slot, c.Outcome, r.id, r.err, tc.want[i])
					}
					if tc.want[i] != nil {
						continue
					}
					wantRows = append(wantRows, rowText(c, 1))
					if p.name == "claimAll" {
						continue // no ids; the rows below say what it wrote
					}
					if r.id == 0 {
						t.Errorf("claim %d claimed without a run id", i)
					} else if got, err := j.Run(r.id); err != nil || got.Routine != c.Routine ||
						!got.Slot.Equal(c.Slot) || got.Outcome != c.Outcome || got.Trigger != c.Trigger || got.Epoch != 1 {
						t.Errorf("claim %d: run %d is %+v (%v), want %+v", i, r.id, got, err, c)
					}
				}
				if rows := journalRows(t, j)[len(before):]; !slices.Equal(rows, wantRows) {
					t.Errorf("rows written: %q, want %q", rows, wantRows)
				}
			})
		}
	}
}

// acquireNewer records epoch in the journal at path through a second journal, as a newer owner
// starting would.
func acquireNewer(t *testing.T, path string, epoch uint64) {
	t.Helper()
	j2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if _, err := j2.Acquire(epoch, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// journalRows returns every run row of j, oldest first, as rowText does.
func journalRows(t *testing.T, j *Journal) []string {
	t.Helper()
	rows, err := j.db.Query(`SELECT routine, slot_key, slot, trigger, outcome, epoch FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c Claim
		var slot int64
		var epoch uint64
		if err := rows.Scan(&c.Routine, &c.Key, &slot, &c.Trigger, &c.Outcome, &epoch); err != nil {
			t.Fatal(err)
		}
		c.Slot = time.Unix(0, slot)
		out = append(out, rowText(c, epoch))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func rowText(c Claim, epoch uint64) string {
	if c.Key == "" {
		c.Key = SlotKey(c.Slot)
	}
	return fmt.Sprintf("%s %s %d %s %s epoch %d", c.Routine, c.Key, c.Slot.UnixNano(), c.Trigger, c.Outcome, epoch)
}
