//go:build linux

package torture

import (
	"fmt"
	"sort"
	"time"
)

// checkSlotsOnce: no (routine, slot) in the shared file twice, none run twice in the journal,
// and no side effect without a claimed run of the same epoch (claim before side effect).
func checkSlotsOnce(ev Evidence) *Check {
	c := &Check{Name: "no slot twice"}
	c.Violations = append(c.Violations, ev.EffectProblems...)
	seen := map[string]SideEffect{}
	for _, e := range ev.Effects {
		k := slotKey(e.Routine, e.Slot)
		if first, dup := seen[k]; dup {
			c.Violations = append(c.Violations, fmt.Sprintf("shared file: %s fired twice (lines %d epoch %d, %d epoch %d)",
				k, first.Line, first.Epoch, e.Line, e.Epoch))
			continue
		}
		seen[k] = e
	}
	if ev.JournalErr != nil {
		c.Violations = append(c.Violations, "journal unreadable: "+ev.JournalErr.Error())
		return c
	}
	runs := map[string][]JournalRun{}
	for _, jr := range ev.Runs {
		k := slotKey(jr.Routine, jr.Slot)
		runs[k] = append(runs[k], jr)
	}
	for k, rs := range runs {
		n := 0
		for _, jr := range rs {
			if executed[jr.Outcome] {
				n++
			}
		}
		if n > 1 {
			c.Violations = append(c.Violations, fmt.Sprintf("journal: %s ran %d times: %s", k, n, describeRuns(rs)))
		}
	}
	// A side effect without a claim by the same epoch means the run started before claiming.
	for _, e := range ev.Effects {
		found := false
		for _, jr := range runs[slotKey(e.Routine, e.Slot)] {
			found = found || (executed[jr.Outcome] && jr.Epoch == e.Epoch)
		}
		if !found {
			c.Violations = append(c.Violations, fmt.Sprintf("shared file line %d: %s (epoch %d) has no claimed run in the journal",
				e.Line, slotKey(e.Routine, e.Slot), e.Epoch))
		}
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%d side effects, %d journal rows", len(ev.Effects), len(ev.Runs)))
	return c
}

// checkNoLoss enumerates every slot of every routine between the first acquisition and the end
// of the attacks and looks for it in the journal.
func checkNoLoss(ev Evidence, iv []Interval, r *Report) *Check {
	c := &Check{Name: "no silent loss"}
	if len(iv) == 0 || ev.JournalErr != nil {
		c.Violations = append(c.Violations, "cannot enumerate slots: no ownership logged or journal unreadable")
		return c
	}
	from := ev.Clock.ToWall(iv[0].Start).Add(edge)
	to := ev.Clock.ToWall(ev.CalmMono).Add(-edge)
	byRoutine := map[string]map[int64]JournalRun{}
	for _, jr := range ev.Runs {
		if byRoutine[jr.Routine] == nil {
			byRoutine[jr.Routine] = map[int64]JournalRun{}
		}
		byRoutine[jr.Routine][jr.Slot.UnixNano()] = jr
	}
	for _, rt := range Routines {
		got := byRoutine[rt.Name]
		slots, offGrid := expectedSlots(rt, got, from, to)
		var missing []string
		ran := 0
		for _, s := range slots {
			jr, ok := got[s.UnixNano()]
			switch {
			case !ok || !(executed[jr.Outcome] || accounted[jr.Outcome]):
				missing = append(missing, s.Format("15:04:05.000"))
			case executed[jr.Outcome]:
				ran++
			}
		}
		r.Expected += len(slots)
		r.Ran += ran
		if len(missing) > 0 {
			c.Violations = append(c.Violations, fmt.Sprintf("%s: %d of %d slots unaccounted for: %s", rt.Name, len(missing), len(slots), head(missing, 12)))
		}
		if len(offGrid) > 0 {
			c.Violations = append(c.Violations, fmt.Sprintf("%s: %d slots off the routine's grid (phase lost across a handoff?): %s", rt.Name, len(offGrid), head(offGrid, 6)))
		}
		c.Notes = append(c.Notes, fmt.Sprintf("%s: %d slots, %d ran, %d missing", rt.Name, len(slots), ran, len(missing)))
	}
	return c
}

// expectedSlots lists a routine's slots in [from, to]. An `every` grid's phase is taken from the
// earliest slot in the journal; journal slots not on that grid are returned as offGrid.
func expectedSlots(rt Routine, got map[int64]JournalRun, from, to time.Time) (slots []time.Time, offGrid []string) {
	if rt.Every == 0 {
		for t := from.Truncate(time.Minute).Add(time.Duration(rt.CronSecond) * time.Second); !t.After(to); t = t.Add(time.Minute) {
			if !t.Before(from) {
				slots = append(slots, t)
			}
		}
		return slots, nil
	}
	if len(got) == 0 {
		for t := from.Truncate(rt.Every); !t.After(to); t = t.Add(rt.Every) {
			if !t.Before(from) {
				slots = append(slots, t) // phase unknown: any grid would be missing entirely
			}
		}
		return slots, nil
	}
	keys := make([]int64, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	period := int64(rt.Every)
	phase := ((keys[0] % period) + period) % period
	for _, k := range keys {
		if ((k%period)+period)%period != phase {
			offGrid = append(offGrid, time.Unix(0, k).Format("15:04:05.000"))
		}
	}
	start := from.UnixNano() - ((from.UnixNano()-phase)%period+period)%period
	for t := start; t <= to.UnixNano(); t += period {
		if t >= from.UnixNano() {
			slots = append(slots, time.Unix(0, t))
		}
	}
	return slots, offGrid
}
