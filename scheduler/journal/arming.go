package journal

// Arming records: when each routine was first armed (catch-up never looks before it) and the
// persisted grid anchor of `every` routines (the phase survives restarts and handoffs).

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/routinely/routinely/scheduler/config"
)

// ArmInfo is what arm returns for one routine.
type ArmInfo struct{ FirstArmed, Anchor time.Time }

// Arm records that the routines are armed (one transaction, so 10,000 routines arm quickly) and
// returns, per name, when each was first armed and, for every schedules (every[name] > 0), the
// grid anchor: kept while the interval stays the same, reset to now otherwise. Errors: ErrFenced
// when a newer owner epoch is recorded; the write error; both wrapped.
func (j *Journal) Arm(every map[string]time.Duration, now time.Time) (map[string]ArmInfo, error) {
	now = now.Truncate(time.Second)
	out := make(map[string]ArmInfo, len(every))
	err := j.write(func(tx *sql.Tx) error {
		// Only the owner moves anchors: an owner fenced by a newer one (still draining after a
		// handoff, its config watcher applying an edit) must not shift the new owner's grid.
		maxE, err := maxEpoch(tx)
		if err != nil {
			return err
		}
		if err := fencedBy(maxE, j.epoch.Load()); err != nil {
			return err
		}
		up, err := tx.Prepare(`INSERT INTO arming (routine, first_armed, every, anchor) VALUES (?, ?, ?, ?)
			ON CONFLICT(routine) DO UPDATE SET every = excluded.every,
				anchor = CASE WHEN arming.every = excluded.every AND arming.anchor != 0 THEN arming.anchor ELSE excluded.anchor END
			RETURNING first_armed, anchor`)
		if err != nil {
			return err
		}
		defer func() { _ = up.Close() }()
		for name, d := range every {
			var first, anc int64
			if err := up.QueryRow(name, now.UnixNano(), int64(d), now.UnixNano()).Scan(&first, &anc); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			out[name] = ArmInfo{time.Unix(0, first), time.Unix(0, anc)}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("arm: %w", err)
	}
	return out, nil
}

// ApplyAnchors sets the persisted `every` grid anchors on cfg's routines, so Preview shows the
// slots the owner has armed. It modifies cfg: use it on a Config of your own. Errors: the query
// error, wrapped.
func (j *Journal) ApplyAnchors(cfg *config.Config) error {
	anchors, err := j.Anchors(cfg)
	if err != nil {
		return err
	}
	for _, r := range cfg.Routines {
		if a, ok := anchors[r.Name]; ok {
			r.Anchor = a
		}
	}
	return nil
}

// Anchored returns r with the `every` grid anchor its owner persisted when it armed r (kept
// while the interval stays the same): a copy when there is one (r may be in use by a running
// engine), r itself when there is none (nothing armed r yet, its interval changed since, or it
// is not an `every` routine). Errors: the query error, wrapped.
func (j *Journal) Anchored(r *config.Routine) (*config.Routine, error) {
	anchors, err := j.Anchors(&config.Config{Routines: []*config.Routine{r}})
	if err != nil {
		return nil, err
	}
	return withAnchor(r, anchors), nil
}

// withAnchor returns r with its grid anchor from anchors (as Anchors returns them): a copy when
// there is one, r itself otherwise.
func withAnchor(r *config.Routine, anchors map[string]time.Time) *config.Routine {
	a, ok := anchors[r.Name]
	if !ok {
		return r
	}
	c := *r
	c.Anchor = a
	return &c
}

// Anchors returns the persisted grid anchor of each `every` routine of cfg whose interval is
// still the one armed. Errors: the query error, wrapped.
func (j *Journal) Anchors(cfg *config.Config) (map[string]time.Time, error) {
	want := map[string]time.Duration{}
	for _, r := range cfg.Routines {
		if r.Kind == config.KindEvery {
			want[r.Name] = r.Every
		}
	}
	out := map[string]time.Time{}
	if len(want) == 0 {
		return out, nil
	}
	// One statement for all (arming has a row per routine ever armed, a small table): an
	// observer with many routines then pays one query, not one per routine.
	rows, err := j.db.Query(`SELECT routine, every, anchor FROM arming`)
	if err != nil {
		return nil, fmt.Errorf("anchors: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var name string
		var every, anc int64
		if err := rows.Scan(&name, &every, &anc); err != nil {
			return nil, fmt.Errorf("anchors: %w", err)
		}
		if iv, ok := want[name]; ok && time.Duration(every) == iv && anc != 0 {
			out[name] = time.Unix(0, anc)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("anchors: %w", err)
	}
	return out, nil
}
