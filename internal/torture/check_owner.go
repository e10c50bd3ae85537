//go:build linux

package torture

import (
	"fmt"
	"time"
)

// checkOneOwner: no two processes' logged ownership intervals overlap (a SIGSTOPped owner's
// interval runs through its stop, since it still holds the guard).
func checkOneOwner(iv []Interval, problems []string) *Check {
	c := &Check{Name: "one owner at a time"}
	c.Violations = append(c.Violations, problems...)
	c.Violations = append(c.Violations, Overlaps(iv)...)
	if len(iv) == 0 {
		c.Violations = append(c.Violations, `no "ownership acquired ... epoch=N mono_ns=M" line in any daemon log: ownership cannot be verified`)
	}
	ends := map[string]int{}
	for _, i := range iv {
		ends[i.EndedBy]++
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%d ownership intervals, ended by %v", len(iv), ends))
	return c
}

// checkEpochs: epochs strictly increase in acquisition order, every executed run carries an
// epoch some daemon acquired and started inside that owner's interval, and every side effect
// carries the epoch of the daemon that ran it (its shell's parent).
func checkEpochs(ev Evidence, iv []Interval) *Check {
	c := &Check{Name: "epochs increase, runs fenced"}
	byEpoch := map[uint64]Interval{}
	for k, i := range iv {
		if k > 0 && i.Epoch <= iv[k-1].Epoch {
			c.Violations = append(c.Violations, fmt.Sprintf("epoch %d (pid %d) acquired after epoch %d (pid %d)", i.Epoch, i.PID, iv[k-1].Epoch, iv[k-1].PID))
		}
		byEpoch[i.Epoch] = i
	}
	if len(iv) == 0 {
		return c
	}
	for _, jr := range ev.Runs {
		if !executed[jr.Outcome] {
			continue
		}
		owner, ok := byEpoch[jr.Epoch]
		if !ok {
			c.Violations = append(c.Violations, fmt.Sprintf("journal run %s has epoch %d that no daemon logged acquiring", slotKey(jr.Routine, jr.Slot), jr.Epoch))
			continue
		}
		if jr.Started.IsZero() {
			continue
		}
		at := ev.Clock.ToMono(jr.Started)
		if at < owner.Start-fenceSlack || at > owner.End+fenceSlack {
			c.Violations = append(c.Violations, fmt.Sprintf("journal run %s (epoch %d) started %s outside its owner's interval (pid %d, %+.0f ms)",
				slotKey(jr.Routine, jr.Slot), jr.Epoch, jr.Started.Format("15:04:05.000"), owner.PID, outside(at, owner)))
		}
	}
	pidEpochs := map[int]map[uint64]bool{}
	for _, i := range iv {
		if pidEpochs[i.PID] == nil {
			pidEpochs[i.PID] = map[uint64]bool{}
		}
		pidEpochs[i.PID][i.Epoch] = true
	}
	attributed := 0
	for _, e := range ev.Effects {
		if _, ok := byEpoch[e.Epoch]; !ok {
			c.Violations = append(c.Violations, fmt.Sprintf("shared file line %d: epoch %d was never acquired", e.Line, e.Epoch))
			continue
		}
		if eps, known := pidEpochs[e.DaemonPID]; known {
			attributed++
			if !eps[e.Epoch] {
				c.Violations = append(c.Violations, fmt.Sprintf("shared file line %d: run by pid %d stamped epoch %d, which is not that daemon's", e.Line, e.DaemonPID, e.Epoch))
			}
		}
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%d epochs; %d/%d side effects attributed to their daemon by parent pid", len(iv), attributed, len(ev.Effects)))
	return c
}

// outside returns how far the CLOCK_MONOTONIC instant at (ns) lies outside interval i, in ms:
// negative before its start, positive after its end.
func outside(at int64, i Interval) float64 {
	if at < i.Start {
		return float64(at-i.Start) / 1e6
	}
	return float64(at-i.End) / 1e6
}

// checkAvailability reports the fraction of slots that ran and fails when nobody owned for
// more than 1 s while a contender was alive and no owner was SIGSTOPped.
func checkAvailability(ev Evidence, iv []Interval, r *Report) *Check {
	c := &Check{Name: "availability"}
	if len(iv) == 0 {
		return c
	}
	gap, at := LongestGap(iv, ev.Procs, ev.Stops, iv[0].Start, ev.EndMono)
	r.GapMS = float64(gap) / 1e6
	if gap > int64(time.Second) {
		c.Violations = append(c.Violations, fmt.Sprintf("no owner for %.0f ms from %s while a contender was alive and none was stopped (goal ≤ 1 s)",
			r.GapMS, ev.Clock.ToWall(at).UTC().Format("15:04:05.000")))
	}
	ratio := 0.0
	if r.Expected > 0 {
		ratio = float64(r.Ran) / float64(r.Expected)
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%d/%d slots ran (%.1f%%; overlap skips and catch-up misses count as not run); longest ownerless gap %.0f ms",
		r.Ran, r.Expected, 100*ratio, r.GapMS))
	return c
}
