package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// routineKeys are the keys a [[routine]] (and, except name, [defaults]) may have.
var routineKeys = map[string]bool{
	"name": true, "cron": true, "every": true, "at": true, "days": true, "timezone": true,
	"jitter": true, "timeout": true, "overlap": true, "catch_up": true, "catch_up_window": true,
	"run": true, "shell": true, "watch": true, "notify": true, "ping": true, "dir": true,
	"env": true, "paused": true, "retries": true, "auto_pause_after": true, "notify_on": true,
	"keep_runs": true, "shared": true, "network_grace": true,
}

// defaultsOnlyKeys are the [defaults] keys that set the engine, not each routine.
var defaultsOnlyKeys = map[string]bool{"max_parallel_catch_up": true}

var (
	scheduleKeys = []string{"cron", "every", "at"}
	actionKeys   = []string{"run", "shell", "watch", "notify", "ping"}
	nameRE       = regexp.MustCompile(`^[a-z0-9-]+$`)
	weekdays     = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday,
		"wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}
)

// maxProblems is how many problems one file reports. A file with more (a list of a million bad
// entries, a generated file gone wrong) gets one last problem counting the rest: the first
// ones say what to fix, and the daemon, status and the desktop window stay small.
const maxProblems = 100

// validator collects problems with their routines.toml positions.
type validator struct {
	file      string
	base      string
	positions map[string]pos
	problems  []Problem // the first maxProblems found
	found     int       // problems found, kept or not
	more      *Problem  // the first one past maxProblems
	local     Zone      // the system zone, for routines without a timezone (read once per file)
	now       time.Time // when the file is validated: a calendar schedule must have a slot after it
}

// problem records a finding at the key path (or its closest known parent).
func (v *validator) problem(routine, path, format string, args ...any) {
	p := v.posOf(path)
	v.add(Problem{File: v.file, Line: p.Line, Col: p.Col, Routine: routine, Message: fmt.Sprintf(format, args...)})
}

// add records p, or only counts it past maxProblems.
func (v *validator) add(p Problem) {
	v.found++
	switch {
	case len(v.problems) < maxProblems:
		v.problems = append(v.problems, p)
	case v.more == nil:
		v.more = &p
	}
}

// report returns the problems to show: the first maxProblems, and one at the first left out
// that says how many more there are.
func (v *validator) report() []Problem {
	if v.more == nil {
		return v.problems
	}
	p := *v.more
	p.Routine = ""
	p.Message = fmt.Sprintf("%d more problems from here on are not shown; fix the ones above first", v.found-len(v.problems))
	return append(v.problems, p)
}

func (v *validator) posOf(path string) pos {
	for path != "" {
		if p, ok := v.positions[path]; ok && p.Line > 0 {
			return p
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return pos{1, 1}
}

// fields resolves a routine's keys against [defaults]: a key the routine sets wins; schedule and
// action keys are taken as a group (a routine with its own `every` ignores a defaulted `cron`).
type fields struct {
	vals  map[string]any
	paths map[string]string
}

func mergeDefaults(path string, tab, defaults map[string]any) fields {
	f := fields{vals: map[string]any{}, paths: map[string]string{}}
	own := func(group []string) bool {
		for _, k := range group {
			if _, ok := tab[k]; ok {
				return true
			}
		}
		return false
	}
	ownSched, ownAction := own(scheduleKeys), own(actionKeys)
	for k, val := range defaults {
		if k == "name" || (ownSched && (contains(scheduleKeys, k) || k == "days")) || (ownAction && contains(actionKeys, k)) {
			continue
		}
		f.vals[k], f.paths[k] = val, "defaults."+k
	}
	for k, val := range tab {
		f.vals[k], f.paths[k] = val, path+"."+k
	}
	return f
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// routine validates one [[routine]] table; it returns nil (after recording problems) when the
// routine is invalid.
func (v *validator) routine(path string, tab, defaults map[string]any) *Routine {
	start := v.found
	f := mergeDefaults(path, tab, defaults)
	p := v.posOf(path)
	r := &Routine{Line: p.Line, Col: p.Col, Timeout: DefaultTimeout, Overlap: OverlapSkip,
		CatchUp: CatchUpOnce, CatchUpWindow: DefaultCatchUpWindow, AutoPauseAfter: DefaultAutoPauseAfter,
		KeepRuns: DefaultKeepRuns, NetworkGrace: DefaultNetworkGrace, Timezone: v.local.Name, Location: v.local.Loc, systemZone: true}
	name, _ := tab["name"].(string)
	r.Name = name
	if _, ok := tab["name"]; !ok {
		v.problem("", path, "routine has no name")
	} else if !nameRE.MatchString(name) {
		v.problem(name, path+".name", "name %q must match [a-z0-9-]+", tab["name"])
	}
	bad := func(k, format string, args ...any) { v.problem(name, f.paths[k], format, args...) }

	for _, k := range sortedKeys(tab) {
		if !routineKeys[k] {
			v.problem(name, path+"."+k, "unknown key %q", k)
		}
	}
	str := func(k string) (string, bool) {
		val, ok := f.vals[k]
		if !ok {
			return "", false
		}
		s, isStr := val.(string)
		if !isStr {
			bad(k, "%s must be a string", k)
			return "", false
		}
		return s, true
	}
	dur := func(k string, min time.Duration, dst *time.Duration) {
		s, ok := str(k)
		if !ok {
			return
		}
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			bad(k, "%s: %q is not a duration like \"30s\" or \"1h30m\"", k, s)
		case min == time.Nanosecond && d <= 0:
			bad(k, "%s must be positive, got %s", k, s)
		case min > 0 && d < min:
			bad(k, "%s must be at least %s, got %s", k, min, s)
		case min == 0 && d < 0:
			bad(k, "%s must not be negative, got %s", k, s)
		default:
			*dst = d
		}
	}
	integer := func(k string, lo, hi int64, dst *int) {
		val, ok := f.vals[k]
		if !ok {
			return
		}
		n, isInt := val.(int64)
		if !isInt || n < lo || n > hi {
			bad(k, "%s must be an integer from %d to %d", k, lo, hi)
			return
		}
		*dst = int(n)
	}
	enum := func(k string, dst *string, allowed ...string) {
		if s, ok := str(k); ok {
			if !contains(allowed, s) {
				bad(k, "%s must be one of %s, got %q", k, strings.Join(allowed, ", "), s)
				return
			}
			*dst = s
		}
	}

	if tz, ok := str("timezone"); ok && tz != "" && tz != "Local" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			bad("timezone", "unknown time zone %q", tz)
		} else {
			r.Timezone, r.Location, r.systemZone = tz, loc, false
		}
	}
	dur("jitter", 0, &r.Jitter)
	dur("timeout", time.Nanosecond, &r.Timeout)
	dur("catch_up_window", time.Nanosecond, &r.CatchUpWindow)
	dur("network_grace", 0, &r.NetworkGrace)
	enum("overlap", &r.Overlap, OverlapSkip, OverlapQueue, OverlapReplace)
	enum("catch_up", &r.CatchUp, CatchUpOnce, CatchUpSkip)
	integer("retries", 0, MaxRetries, &r.Retries)
	integer("auto_pause_after", 0, 1000, &r.AutoPauseAfter)
	integer("keep_runs", 1, 1_000_000, &r.KeepRuns)
	if val, ok := f.vals["paused"]; ok {
		b, isBool := val.(bool)
		if !isBool {
			bad("paused", "paused must be true or false")
		}
		r.Paused = b
	}
	r.Shared = true
	if val, ok := f.vals["shared"]; ok {
		b, isBool := val.(bool)
		if !isBool {
			bad("shared", "shared must be true or false")
		}
		r.Shared = b
	}
	if val, ok := f.vals["notify_on"]; ok {
		list, _ := val.([]any)
		if list == nil {
			bad("notify_on", "notify_on must be a list")
		}
		r.NotifyOn = []string{} // present but empty: no notifications
		for i, item := range list {
			s, _ := item.(string)
			if s != "success" && s != "failure" && s != "change" {
				v.problem(name, fmt.Sprintf("%s[%d]", f.paths["notify_on"], i), "notify_on entries are success, failure or change, got %v", item)
				continue
			}
			r.NotifyOn = append(r.NotifyOn, s)
		}
	}
	if s, ok := str("dir"); ok {
		r.Dir = expandHome(s)
	}
	if val, ok := f.vals["env"]; ok {
		m, isMap := val.(map[string]any)
		if !isMap {
			bad("env", "env must be a table of strings, e.g. env = { KEY = \"value\" }")
		}
		r.Env = map[string]string{}
		for _, k := range sortedKeys(m) {
			s, isStr := m[k].(string)
			if !isStr || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(s, 0) {
				v.problem(name, f.paths["env"]+"."+k, "env %q must be a string without NUL and a name without '='", k)
				continue
			}
			r.Env[k] = s
		}
	}
	v.scheduleOf(r, f, name)
	v.actionOf(r, f, name)
	if v.found > start {
		return nil
	}
	return r
}

// scheduleOf validates exactly one of cron, every, at (+days) and compiles it.
func (v *validator) scheduleOf(r *Routine, f fields, name string) {
	bad := func(k, format string, args ...any) { v.problem(name, f.paths[k], format, args...) }
	kind, ok := v.exactlyOne(r, f, name, scheduleKeys, "routine needs exactly one schedule: cron, every or at",
		"routine has two schedule kinds (%s); keep exactly one of cron, every, at")
	if !ok {
		return
	}
	r.Kind = kind
	if _, ok := f.vals["days"]; ok && r.Kind != KindAt {
		bad("days", "days only applies to an at schedule")
	}
	switch r.Kind {
	case KindCron:
		s, _ := f.vals["cron"].(string)
		spec, err := parseCron(s)
		if err != nil {
			bad("cron", "%v", err)
			return
		}
		r.Cron, r.sched = s, &calendarSchedule{specs: []*cron.SpecSchedule{spec}, loc: r.Location}
	case KindEvery:
		s, _ := f.vals["every"].(string)
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Second || d > MaxEvery {
			bad("every", "every must be a duration from 1s to %s (%d days), got %q; for longer periods use a cron or at schedule",
				shortDuration(MaxEvery), MaxEvery/(24*time.Hour), f.vals["every"])
			return
		}
		r.Every = d
	case KindAt:
		var at []string
		switch val := f.vals["at"].(type) {
		case string:
			at = []string{val}
		case []any:
			for _, x := range val {
				s, _ := x.(string)
				at = append(at, s)
			}
		}
		if len(at) == 0 {
			bad("at", "at must be a list of \"HH:MM\" times")
			return
		}
		if dv, ok := f.vals["days"]; ok {
			list, _ := dv.([]any)
			if len(list) == 0 {
				bad("days", "days must be a non-empty list like [\"mon\", \"fri\"]")
			}
			for i, x := range list {
				s, _ := x.(string)
				d, known := weekdays[strings.ToLower(s)]
				if !known {
					v.problem(name, fmt.Sprintf("%s[%d]", f.paths["days"], i), "unknown day %v (want mon, tue, wed, thu, fri, sat, sun)", x)
					continue
				}
				r.Days = append(r.Days, d)
			}
			sort.Slice(r.Days, func(i, j int) bool { return r.Days[i] < r.Days[j] })
		}
		cs := &calendarSchedule{loc: r.Location}
		for i, s := range at {
			spec, err := atSpec(s, r.Days)
			if err != nil {
				v.problem(name, fmt.Sprintf("%s[%d]", f.paths["at"], i), "%v", err)
				continue
			}
			cs.specs = append(cs.specs, spec)
		}
		r.At, r.sched = at, cs
	}
	// A calendar schedule without a slot within the horizon never fires ("0 0 31 2 *": there is
	// no 31 February); see SlotHorizonYears for why the horizon settles it.
	if r.sched != nil && r.sched.Next(v.now).IsZero() {
		bad(r.Kind, "%s %s never fires: no date matches within %d years (is it a day the month does not have, like 31 February?)",
			r.Kind, quoteSchedule(f.vals[r.Kind]), SlotHorizonYears)
	}
}

// quoteSchedule renders a cron string or an at list as written, for messages.
func quoteSchedule(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// exactlyOne returns the one key of group that the routine sets. When it sets none, missing is
// reported at the routine's [[routine]] header; when it sets several, several (a format with one
// %s for the keys) is reported at the second one. ok is false in both cases.
func (v *validator) exactlyOne(r *Routine, f fields, name string, group []string, missing, several string) (key string, ok bool) {
	var set []string
	for _, k := range group {
		if _, present := f.vals[k]; present {
			set = append(set, k)
		}
	}
	switch len(set) {
	case 1:
		return set[0], true
	case 0:
		v.add(Problem{File: v.file, Line: r.Line, Col: r.Col, Routine: name, Message: missing})
	default:
		v.problem(name, f.paths[set[1]], several, strings.Join(set, " and "))
	}
	return "", false
}

// expandHome turns a leading "~" into the user's home directory.
func expandHome(dir string) string {
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, dir[1:])
		}
	}
	return dir
}
