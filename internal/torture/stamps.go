//go:build linux

package torture

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Lifetime is one run as its own shell stamped it: when it started and when it ended, on the
// clock of /proc/uptime (ns since boot, 10 ms resolution), from its "start" and "end" lines in
// stamps.log. The stamps lie inside the processes' real lifetime, so two stamped lifetimes that
// overlap really overlapped (equal stamps, within one tick, do not count as overlapping).
type Lifetime struct {
	Routine    string
	Slot       time.Time
	Epoch      uint64
	ShellPID   int
	Start, End int64 // ns since boot; End 0: no end stamp (still running when the evidence was read)
	Line       int   // of the start stamp
}

// ReadStamps pairs the start and end stamps of stamps.log ("start|end routine slot epoch
// shell-pid uptime" per line) into lifetimes, in file order. Malformed lines are returned as
// problems. An end without a start (a run that got SIGTERM before it stamped its start) is
// ignored: that run did nothing.
func ReadStamps(path string) (lives []Lifetime, problems []string, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	open := map[string]int{} // routine, slot, pid → index in lives
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fs := strings.Fields(sc.Text())
		if len(fs) != 6 || (fs[0] != "start" && fs[0] != "end") {
			problems = append(problems, fmt.Sprintf("stamps.log:%d: malformed line %q", n, sc.Text()))
			continue
		}
		slot, err1 := time.Parse(time.RFC3339Nano, fs[2])
		epoch, err2 := strconv.ParseUint(fs[3], 10, 64)
		pid, err3 := strconv.Atoi(fs[4])
		up, err4 := strconv.ParseFloat(fs[5], 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || up <= 0 {
			problems = append(problems, fmt.Sprintf("stamps.log:%d: bad field in %q", n, sc.Text()))
			continue
		}
		key := fs[1] + " " + fs[2] + " " + fs[4]
		at := int64(math.Round(up * 1e9))
		if fs[0] == "start" {
			open[key] = len(lives)
			lives = append(lives, Lifetime{Routine: fs[1], Slot: slot, Epoch: epoch, ShellPID: pid, Start: at, Line: n})
			continue
		}
		// A SIGTERM just after the normal end stamps it twice: the first end counts.
		if i, ok := open[key]; ok && lives[i].End == 0 {
			lives[i].End = at
		}
	}
	return lives, problems, sc.Err()
}

// checkNoOverlap: no two runs of a routine overlap in time, from the runs' own stamps — across
// owners above all: a run that an owner left behind when it died must have ended before the
// next owner starts that routine again. (Within one owner the overlap policy, "skip" for every
// chaos routine, forbids it too.) A run without an end stamp counts as running to the end.
func checkNoOverlap(ev Evidence) *Check {
	c := &Check{Name: "no two runs of a routine overlap"}
	c.Violations = append(c.Violations, ev.StampProblems...)
	byRoutine := map[string][]Lifetime{}
	unended := 0
	for _, l := range ev.Lifetimes {
		byRoutine[l.Routine] = append(byRoutine[l.Routine], l)
		if l.End == 0 {
			unended++
		}
	}
	routines := make([]string, 0, len(byRoutine))
	for r := range byRoutine {
		routines = append(routines, r)
	}
	sort.Strings(routines)
	for _, r := range routines {
		lives := byRoutine[r]
		sort.SliceStable(lives, func(i, j int) bool { return lives[i].Start < lives[j].Start })
		// last is the lifetime that ends latest so far: a later start before its end overlaps it.
		var last *Lifetime
		for i := range lives {
			l := &lives[i]
			if last != nil && (last.End == 0 || l.Start < last.End) {
				c.Violations = append(c.Violations, fmt.Sprintf("%s (epoch %d, pid %d) started at %s while %s (epoch %d, pid %d) ran from %s to %s",
					slotKey(r, l.Slot), l.Epoch, l.ShellPID, upText(l.Start),
					slotKey(r, last.Slot), last.Epoch, last.ShellPID, upText(last.Start), upText(last.End)))
			}
			if last == nil || (last.End != 0 && (l.End == 0 || l.End > last.End)) {
				last = l
			}
		}
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%d run lifetimes stamped, %d without an end stamp", len(ev.Lifetimes), unended))
	return c
}

// upText formats ns since boot as "uptime 1234.56s" ("no end stamp" for 0).
func upText(ns int64) string {
	if ns == 0 {
		return "(no end stamp)"
	}
	return fmt.Sprintf("uptime %.2fs", float64(ns)/1e9)
}
