//go:build linux

package torture

import (
	"fmt"
	"sort"
)

// Interval is one stretch of ownership of one process, in CLOCK_MONOTONIC nanoseconds, from its
// own "acquired" log line to its "released" line (or to the instant the harness SIGKILLed it).
type Interval struct {
	ProcID, PID int
	Epoch       uint64
	Start, End  int64
	EndedBy     string // released | killed | exited (no release logged) | running
}

// BuildIntervals pairs each process's acquired/released events. Malformed sequences (released
// without acquired, acquired twice, epoch mismatch) are returned as problems.
func BuildIntervals(procs []ProcRecord, events map[int][]OwnEvent, now int64) ([]Interval, []string) {
	var out []Interval
	var problems []string
	for _, p := range procs {
		var open *Interval
		for _, e := range events[p.ID] {
			switch {
			case e.Acquired && open != nil:
				problems = append(problems, fmt.Sprintf("pid %d logged acquired (epoch %d) while owning epoch %d", p.PID, e.Epoch, open.Epoch))
				open.End, open.EndedBy = e.Mono, "re-acquired"
				out = append(out, *open)
				open = &Interval{ProcID: p.ID, PID: p.PID, Epoch: e.Epoch, Start: e.Mono}
			case e.Acquired:
				open = &Interval{ProcID: p.ID, PID: p.PID, Epoch: e.Epoch, Start: e.Mono}
			case open == nil:
				problems = append(problems, fmt.Sprintf("pid %d logged released (epoch %d) without acquiring", p.PID, e.Epoch))
			default:
				if e.Epoch != open.Epoch {
					problems = append(problems, fmt.Sprintf("pid %d released epoch %d but acquired epoch %d", p.PID, e.Epoch, open.Epoch))
				}
				open.End, open.EndedBy = e.Mono, "released"
				out = append(out, *open)
				open = nil
			}
		}
		if open == nil {
			continue
		}
		switch {
		case p.KilledMono != 0 && (p.EndMono == 0 || p.KilledMono <= p.EndMono):
			// The process owned at least until the harness sent SIGKILL.
			open.End, open.EndedBy = p.KilledMono, "killed"
		case p.EndMono != 0:
			open.End, open.EndedBy = p.EndMono, "exited"
			problems = append(problems, fmt.Sprintf("pid %d exited (code %d %s) while owning epoch %d without logging the release",
				p.PID, p.ExitCode, p.Signal, open.Epoch))
		default:
			open.End, open.EndedBy = now, "running"
		}
		out = append(out, *open)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, problems
}

// Overlaps returns every pair of intervals of different processes that overlap.
func Overlaps(iv []Interval) []string {
	var out []string
	for i := range iv {
		for j := i + 1; j < len(iv) && iv[j].Start < iv[i].End; j++ {
			if iv[j].PID == iv[i].PID {
				continue
			}
			out = append(out, fmt.Sprintf("pid %d (epoch %d, %s) and pid %d (epoch %d) both owned for %.1f ms",
				iv[i].PID, iv[i].Epoch, iv[i].EndedBy, iv[j].PID, iv[j].Epoch,
				float64(min(iv[i].End, iv[j].End)-iv[j].Start)/1e6))
		}
	}
	return out
}

// LongestGap is the longest stretch within [from, to] during which some contender was alive,
// none owned, and nobody was SIGSTOPped (a stopped owner blocks everyone by design).
func LongestGap(iv []Interval, procs []ProcRecord, stops []Window, from, to int64) (gap, at int64) {
	type seg struct{ a, b int64 }
	var alive, owned, stopped []seg
	for _, p := range procs {
		end := p.EndMono
		if p.KilledMono != 0 && (end == 0 || p.KilledMono < end) {
			end = p.KilledMono
		}
		if end == 0 {
			end = to
		}
		alive = append(alive, seg{p.StartMono, end})
	}
	for _, i := range iv {
		owned = append(owned, seg{i.Start, i.End})
	}
	for _, w := range stops {
		end := w.End
		if end == 0 {
			end = to
		}
		stopped = append(stopped, seg{w.Start, end})
	}
	points := []int64{from, to}
	for _, set := range [][]seg{alive, owned, stopped} {
		for _, s := range set {
			points = append(points, s.a, s.b)
		}
	}
	sort.Slice(points, func(i, j int) bool { return points[i] < points[j] })
	covers := func(set []seg, x int64) bool {
		for _, s := range set {
			if s.a <= x && x < s.b {
				return true
			}
		}
		return false
	}
	var runStart int64 = -1
	for k := 0; k+1 < len(points); k++ {
		a, b := points[k], points[k+1]
		if a < from || b > to || a == b {
			continue
		}
		mid := a + (b-a)/2
		if covers(alive, mid) && !covers(owned, mid) && !covers(stopped, mid) {
			if runStart < 0 {
				runStart = a
			}
			if b-runStart > gap {
				gap, at = b-runStart, runStart
			}
		} else {
			runStart = -1
		}
	}
	return gap, at
}
