package config

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule computes slots: the scheduled instants of a routine (Routine.Slots). The same value
// is handed to gocron (as its Cron implementation) and used by Preview, catch-up and the run
// path, so the preview, the armed timers and the claimed slots cannot disagree.
type Schedule interface {
	// Next returns the first slot strictly after t, or zero when there is none within
	// SlotHorizonYears.
	Next(t time.Time) time.Time
}

// calendarSchedule is a cron or `at` schedule evaluated on the wall clock of loc. Specs are
// matched in civil time (a UTC calendar without DST) and each civil match is mapped to one
// instant: a repeated wall time (DST fall-back) maps to its first occurrence, a non-existent one
// (spring-forward gap) to the transition instant. Several gap times therefore collapse into one
// slot, and the second pass through a repeated hour produces no slot at all.
type calendarSchedule struct {
	specs []*cron.SpecSchedule // in civil time (Location = UTC); next = earliest of them
	loc   *time.Location
}

// SlotHorizonYears bounds every search for a calendar slot. A cron or `at` schedule that fires
// at all fires within any 8 years: its time-of-day fields match every day they allow, and the
// rarest day a five-field cron can name is 29 February, which skips 2100 (2096 → 2104). So a
// schedule with no slot within 10 years of any instant never fires (validation refuses it), and
// one routine's slot computation costs at most this span of calendar scanning.
const SlotHorizonYears = 10

// Next returns the first slot strictly after t, or zero when none lies within SlotHorizonYears.
func (c *calendarSchedule) Next(t time.Time) time.Time {
	civil := toCivil(t.In(c.loc))
	end := civil.AddDate(SlotHorizonYears, 0, 0)
	// Loop because in a repeated hour the first occurrence of a civil match can lie before t;
	// each pass moves civil forward, so the horizon ends the loop.
	for civil.Before(end) {
		var best time.Time
		for _, s := range c.specs {
			n := specNext(s, civil, end)
			if !n.IsZero() && (best.IsZero() || n.Before(best)) {
				best = n
			}
		}
		if best.IsZero() {
			return time.Time{}
		}
		inst := civilToInstant(best, c.loc)
		if inst.After(t) {
			return inst
		}
		civil = best
	}
	return time.Time{}
}

// specNext is s.Next(civil) searched up to end (zero when no match is before end). The cron
// library gives up after the fifth calendar year after civil's and returns zero; the search
// goes on from the end of that year, so a 29 February across 2100 is still found.
func specNext(s *cron.SpecSchedule, civil, end time.Time) time.Time {
	for civil.Before(end) {
		n := s.Next(civil)
		if !n.IsZero() {
			if n.After(end) {
				return time.Time{}
			}
			return n
		}
		// Next searched from civil's next whole second through the end of that year + 5.
		last := civil.Truncate(time.Second).Add(time.Second).Year() + 5
		civil = time.Date(last, time.December, 31, 23, 59, 59, 0, time.UTC)
	}
	return time.Time{}
}

// everySchedule is a fixed grid anchor + k*every; the anchor is persisted so the phase survives
// restarts and handoffs.
type everySchedule struct {
	every  time.Duration
	anchor time.Time
}

func (e *everySchedule) Next(t time.Time) time.Time {
	if t.Before(e.anchor) {
		return e.anchor.UTC()
	}
	k := t.Sub(e.anchor) / e.every
	return e.anchor.Add((k + 1) * e.every).UTC()
}

// PrevSlot returns the latest slot at or before t, searching back at most lookback (zero if
// none). It steps with Next, so it agrees with Next by construction.
func PrevSlot(s Schedule, t time.Time, lookback time.Duration) time.Time {
	if es, ok := s.(*everySchedule); ok {
		if t.Before(es.anchor) {
			return time.Time{}
		}
		k := t.Sub(es.anchor) / es.every
		return es.anchor.Add(k * es.every).UTC()
	}
	// Calendar: find the latest slot in (t-lookback, t] by galloping windows backwards.
	for win := time.Hour; ; win *= 4 {
		if win > lookback {
			win = lookback
		}
		var last time.Time
		for n := s.Next(t.Add(-win)); !n.IsZero() && !n.After(t); n = s.Next(n) {
			last = n
		}
		if !last.IsZero() || win >= lookback {
			return last
		}
	}
}

// SlotsBetween returns the slots in (from, to], at most limit of the newest ones, and how many
// older ones were left out.
func SlotsBetween(s Schedule, from, to time.Time, limit int) (slots []time.Time, dropped int) {
	for n := s.Next(from); !n.IsZero() && !n.After(to); n = s.Next(n) {
		slots = append(slots, n)
		if len(slots) > limit {
			slots = slots[1:]
			dropped++
		}
	}
	return slots, dropped
}

// toCivil returns t's wall-clock fields as a UTC time (a civil time without DST).
func toCivil(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// civilToInstant maps a civil time to an instant in loc: the first occurrence when the wall
// time repeats, the transition instant when it does not exist.
func civilToInstant(civil time.Time, loc *time.Location) time.Time {
	var offsets []int
	for _, d := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := civil.Add(d).In(loc).Zone()
		offsets = appendUnique(offsets, off)
	}
	var first, gapEnd time.Time
	for _, off := range offsets {
		cand := civil.Add(-time.Duration(off) * time.Second).In(loc)
		cc := toCivil(cand)
		switch {
		case cc.Equal(civil):
			if first.IsZero() || cand.Before(first) {
				first = cand
			}
		case cc.After(civil):
			// civil lies in a gap just before cand's zone period began.
			start, _ := cand.ZoneBounds()
			if !start.IsZero() && toCivil(start).After(civil) && (gapEnd.IsZero() || start.Before(gapEnd)) {
				gapEnd = start
			}
		}
	}
	if !first.IsZero() {
		return first
	}
	if !gapEnd.IsZero() {
		return gapEnd.In(loc)
	}
	return time.Date(civil.Year(), civil.Month(), civil.Day(), civil.Hour(), civil.Minute(), civil.Second(), civil.Nanosecond(), loc)
}

func appendUnique(s []int, v int) []int {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// cronParser accepts 5 fields, 6 with leading seconds, and @daily-style descriptors.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseCron compiles a cron expression to a civil-time spec. @every and TZ= prefixes are
// refused: routines.toml has `every` and `timezone` keys for those.
func parseCron(expr string) (*cron.SpecSchedule, error) {
	if len(expr) > 0 && (expr[0] == 'T' || expr[0] == 'C') {
		return nil, fmt.Errorf("cron %q: use the timezone key instead of a TZ= prefix", expr)
	}
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %w", expr, err)
	}
	spec, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("cron %q: use the every key for fixed intervals", expr)
	}
	spec.Location = time.UTC
	return spec, nil
}

// atSpec builds the civil spec for one `at` time ("HH:MM" or "HH:MM:SS") on the given days
// (empty: every day).
func atSpec(hhmm string, days []time.Weekday) (*cron.SpecSchedule, error) {
	var h, m, s int
	var rest string
	n, _ := fmt.Sscanf(hhmm, "%d:%d%s", &h, &m, &rest)
	if n < 2 || len(hhmm) < 4 {
		return nil, fmt.Errorf("at %q: want HH:MM", hhmm)
	}
	if rest != "" {
		if _, err := fmt.Sscanf(rest, ":%d", &s); err != nil || len(rest) != 3 {
			return nil, fmt.Errorf("at %q: want HH:MM or HH:MM:SS", hhmm)
		}
	}
	if h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s > 59 {
		return nil, fmt.Errorf("at %q: hour 0-23, minute and second 0-59", hhmm)
	}
	const star = 1 << 63
	spec := &cron.SpecSchedule{
		Second: 1 << uint(s), Minute: 1 << uint(m), Hour: 1 << uint(h),
		Dom: allBits(1, 31) | star, Month: allBits(1, 12) | star, Location: time.UTC,
	}
	if len(days) == 0 {
		spec.Dow = allBits(0, 6) | star
	} else {
		for _, d := range days {
			spec.Dow |= 1 << uint(d)
		}
	}
	return spec, nil
}

func allBits(lo, hi uint) uint64 {
	var b uint64
	for i := lo; i <= hi; i++ {
		b |= 1 << i
	}
	return b
}
