package config

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Defaults and bounds of routines.toml.
const (
	DefaultTimeout        = 3 * time.Minute
	DefaultCatchUpWindow  = 12 * time.Hour
	DefaultAutoPauseAfter = 5
	DefaultKeepRuns       = 500
	// DefaultNetworkGrace is how long a catch-up of a watch or ping keeps trying to connect
	// (network_grace): after a wake the network often needs a minute to come back.
	DefaultNetworkGrace = 2 * time.Minute
	MaxRetries          = 5
	MaxOutput           = 64 << 10 // bytes of combined output kept per run
	// MaxEvery is the longest `every` interval: 366 days. A longer period is a calendar date,
	// better written as cron or at (which follow the calendar), and the bound keeps the slot
	// arithmetic anchor + k*every (a time.Duration product, ±292 years) far from overflow for
	// as long as previews and catch-up look ahead.
	MaxEvery = 366 * 24 * time.Hour
)

// Overlap policies (routines.toml "overlap").
const (
	OverlapSkip    = "skip"
	OverlapQueue   = "queue"
	OverlapReplace = "replace"
)

// Catch-up policies (routines.toml "catch_up").
const (
	CatchUpOnce = "once"
	CatchUpSkip = "skip"
)

// Schedule kinds.
const (
	KindCron  = "cron"
	KindEvery = "every"
	KindAt    = "at"
)

// Routine is one validated routine of routines.toml.
type Routine struct {
	Name     string
	Kind     string         // KindCron | KindEvery | KindAt
	Cron     string         // KindCron: the expression as written
	Every    time.Duration  // KindEvery: the interval (>= 1 s)
	At       []string       // KindAt: "HH:MM" wall times
	Days     []time.Weekday // KindAt: empty means every day
	Timezone string         // IANA name; for the system zone its name when known, else "Local"
	Location *time.Location
	// systemZone: no timezone key (or "Local"): the routine follows the system zone, and
	// Timezone/Location are that zone's, re-read when it changes (Config.InZone).
	systemZone bool

	Jitter        time.Duration
	Timeout       time.Duration
	Overlap       string // OverlapSkip | OverlapQueue | OverlapReplace
	CatchUp       string // CatchUpOnce | CatchUpSkip
	CatchUpWindow time.Duration

	Action string // run | shell | watch | notify | ping
	Spec   any    // action.RunSpec, ShellSpec, WatchSpec, NotifySpec or PingSpec
	Dir    string
	Env    map[string]string
	Paused bool // `paused = true` in the file
	// Shared: with a [hub], the devices run this routine once between them (the default);
	// `shared = false` keeps it to each device, which then runs its own copy.
	Shared bool

	Retries        int
	AutoPauseAfter int // 0 disables auto-pause
	NotifyOn       []string
	KeepRuns       int
	// NetworkGrace is how long a catch-up run of a watch or ping retries, with backoff, while it
	// cannot connect (0: not at all).
	NetworkGrace time.Duration

	// Anchor is the origin of an `every` grid. The engine sets it from the journal; when zero,
	// Preview and arming use the `from` instant (what arming now would do).
	Anchor time.Time

	Line, Col int // where the [[routine]] header is

	sched Schedule
}

// Slots returns the routine's slot computation. An `every` grid starts at r.Anchor, or at anchor
// (truncated to the second) when r.Anchor is zero. r must come from LoadConfig or Parse: a
// cron or at routine built by hand has no compiled schedule (nil).
func (r *Routine) Slots(anchor time.Time) Schedule {
	if r.Kind == KindEvery {
		if !r.Anchor.IsZero() {
			anchor = r.Anchor
		}
		return &everySchedule{every: r.Every, anchor: anchor.Truncate(time.Second)}
	}
	return r.sched
}

// FollowsSystemZone reports whether r has no timezone of its own and follows the system's.
func (r *Routine) FollowsSystemZone() bool { return r.systemZone }

// Describe returns the schedule in words, e.g. "every 30s", "at 08:00, 18:30 Mon,Tue" or
// "at 09:30 Mon–Fri".
func (r *Routine) Describe() string {
	switch r.Kind {
	case KindEvery:
		return "every " + shortDuration(r.Every)
	case KindCron:
		return "cron " + r.Cron
	default:
		s := "at "
		for i, a := range r.At {
			if i > 0 {
				s += ", "
			}
			s += a
		}
		if len(r.Days) > 0 {
			s += " " + dayList(r.Days)
		}
		return s
	}
}

// dayList names days Monday first, three or more consecutive days as a range: "Mon–Fri",
// "Mon,Wed", "Sat,Sun", "Mon–Wed,Fri".
func dayList(days []time.Weekday) string {
	iso := func(d time.Weekday) int { return (int(d) + 6) % 7 } // Monday 0 … Sunday 6
	var on [7]bool
	for _, d := range days {
		on[iso(d)] = true
	}
	name := func(i int) string { return time.Weekday((i + 1) % 7).String()[:3] }
	var parts []string
	for i := 0; i < 7; i++ {
		if !on[i] {
			continue
		}
		j := i
		for j+1 < 7 && on[j+1] {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, name(i)+"–"+name(j))
		case j > i:
			parts = append(parts, name(i), name(j))
		default:
			parts = append(parts, name(i))
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// shortDuration is d as Go prints it without zero trailing units: "1m", "30s", "1h30m", "1h".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Problem is one validation finding in routines.toml, printed as "file:line:col: message".
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Routine string `json:"routine,omitempty"` // empty for file-level problems
	Message string `json:"message"`
}

// String formats a problem as "file:line:col: message", or "file: message" when it has no
// position (a file that cannot be read).
func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
}

// SameDefinition reports whether two validated routines have the same definition: everything
// but where the file has them, the every-anchor the engine sets, and the *time.Location value
// (compared through the zone name and the compiled schedule instead).
func SameDefinition(a, b *Routine) bool {
	x, y := *a, *b
	x.Line, x.Col, y.Line, y.Col = 0, 0, 0, 0
	x.Anchor, y.Anchor = time.Time{}, time.Time{}
	x.sched, y.sched = nil, nil
	x.Location, y.Location = nil, nil
	return reflect.DeepEqual(x, y) && reflect.DeepEqual(a.sched, b.sched)
}
