//go:build linux

package torture

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
)

// OwnEvent is one "ownership acquired"/"ownership released" line a daemon logged about itself.
// The daemon stamps it with CLOCK_MONOTONIC (mono_ns) taken after locking the guard and before
// admitting any run (acquired), and after draining and before unlocking (released), so each
// logged interval lies inside the process's real ownership.
type OwnEvent struct {
	Acquired bool
	Epoch    uint64
	PID      int
	Mono     int64
	// LockedMono is when an acquired owner locked the guard (locked_mono_ns; 0 when the log
	// does not say): before its epoch and record, so LockedMono ≤ Mono.
	LockedMono int64
}

// The daemon logs with slog, as text (key=value) or JSON ("key":value): match both.
var (
	reOwn    = regexp.MustCompile(`ownership (acquired|released)`)
	reEpoch  = regexp.MustCompile(`\bepoch["=:]+(\d+)`)
	rePID    = regexp.MustCompile(`\bpid["=:]+(\d+)`)
	reMono   = regexp.MustCompile(`\bmono_ns["=:]+(\d+)`)
	reLocked = regexp.MustCompile(`\blocked_mono_ns["=:]+(\d+)`)
)

// ParseEvents reads the ownership events of one daemon's log. Lines that mention ownership but
// lack epoch or mono_ns are ignored: they are other messages, not the machine-readable event.
func ParseEvents(path string) ([]OwnEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var evs []OwnEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		m := reOwn.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ep, mono := reEpoch.FindStringSubmatch(line), reMono.FindStringSubmatch(line)
		if ep == nil || mono == nil {
			continue
		}
		e := OwnEvent{Acquired: m[1] == "acquired"}
		e.Epoch, _ = strconv.ParseUint(ep[1], 10, 64)
		e.Mono, _ = strconv.ParseInt(mono[1], 10, 64)
		if l := reLocked.FindStringSubmatch(line); l != nil {
			e.LockedMono, _ = strconv.ParseInt(l[1], 10, 64)
		}
		if p := rePID.FindStringSubmatch(line); p != nil {
			e.PID, _ = strconv.Atoi(p[1])
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}
