package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/routinely/routinely/internal/skew"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/config"
)

// writeJSON prints v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// newTable returns a tabwriter for aligned human output; call Flush when done.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// fmtTime prints t in local time with its distance from now ("09:30:00 (in 12s)"); "-" if zero.
func fmtTime(t *time.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	d := t.Sub(now)
	if d >= 0 {
		return fmt.Sprintf("%s (in %s)", clockText(*t, now), fmtDur(d))
	}
	return fmt.Sprintf("%s (%s ago)", clockText(*t, now), fmtDur(-d))
}

// fmtAgo prints t, a past moment stamped by another process's or device's clock (a
// heartbeat, a tick, an owner's start, a device last seen), as fmtTime does, but never as
// if it were to come: a stamp later than now, another clock running ahead, is "0s ago"
// (skew.Age). "-" if zero.
func fmtAgo(t *time.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%s (%s ago)", clockText(*t, now), fmtDur(skew.Age(*t, now)))
}

// clockText is t in local time: the time of day when t is on now's day, else date and time.
func clockText(t, now time.Time) string {
	layout := "2006-01-02 15:04:05"
	if sameDay(t.Local(), now.Local()) {
		layout = "15:04:05"
	}
	return t.Local().Format(layout)
}

// sameDay reports whether a and b fall on the same calendar day (in their own zones).
func sameDay(a, b time.Time) bool {
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}

// fmtDur prints d rounded for people: 850ms, 12s, 3m20s, 2h5m, 3d4h.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	default:
		days := int(d / (24 * time.Hour))
		return fmt.Sprintf("%dd%dh", days, int((d%(24*time.Hour))/time.Hour))
	}
}

// plural prints n with the singular or plural noun: "1 problem", "2 problems".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ms converts a duration to whole milliseconds for JSON output.
func ms(d time.Duration) int64 { return d.Milliseconds() }

// describeOwner is the one-line "who owns" used by every refusal: role, pid, host, since, epoch.
func describeOwner(r *ownership.Record, now time.Time) string {
	if r == nil {
		return "an unknown process (owner.json is missing or unreadable)"
	}
	since := r.AcquiredAt
	return fmt.Sprintf("the %s (pid %d on %s, owner since %s, epoch %d)",
		roleName(r.Role), r.PID, r.Host, fmtAgo(&since, now), r.Epoch)
}

// roleName is how a person calls each role.
func roleName(r ownership.Role) string {
	switch r {
	case ownership.RoleDesktop:
		return "Routinely desktop app"
	case ownership.RoleDaemon:
		return "routinely daemon"
	default:
		return "process"
	}
}

// ownedHelp says what a person can do when another process owns. An owner that is already
// stopping (state yielding) needs no stop: stopping it again would interrupt its runs in flight.
func ownedHelp(r *ownership.Record) string {
	if r != nil && r.State == ownership.StateYielding {
		return "Run '" + progName + " daemon --wait' to stand by and own as soon as it has released; do not stop it,\n" +
			"that would interrupt its runs in flight. '" + progName + " status' shows it draining."
	}
	stop := "stop it"
	if r != nil && r.Role == ownership.RoleDesktop {
		stop = "quit it from its tray menu"
	} else if r != nil && r.PID > 0 {
		stop = fmt.Sprintf("stop it (kill %d)", r.PID)
	}
	return fmt.Sprintf("To run here: %s, or run '"+progName+" daemon --takeover' to ask it to hand over,\n"+
		"or '"+progName+" daemon --wait' to stand by until it exits. '"+progName+" status' shows its health.", stop)
}

// msDur converts milliseconds from owner.json to a duration.
func msDur(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// printProblems prints routines.toml problems, each once, as FILE:LINE:COL: message. A problem
// several routines share (a bad key in [defaults] disables every routine that inherits it) is
// one line naming them all.
func printProblems(w io.Writer, problems []config.Problem) {
	for _, l := range problemLines(problems) {
		fmt.Fprintln(w, l)
	}
}

// problemLines turns problems into the lines printProblems prints, in their order: problems at
// the same place with the same message are merged, naming their routines.
func problemLines(problems []config.Problem) []string {
	type place struct {
		file      string
		line, col int
		message   string
	}
	var order []place
	routines := map[place][]string{}
	for _, p := range problems {
		k := place{p.File, p.Line, p.Col, p.Message}
		if _, seen := routines[k]; !seen {
			order = append(order, k)
		}
		routines[k] = append(routines[k], p.Routine)
	}
	lines := make([]string, 0, len(order))
	for _, k := range order {
		names := routines[k]
		if len(names) == 1 {
			lines = append(lines, formatProblem(config.Problem{File: k.file, Line: k.line, Col: k.col, Routine: names[0], Message: k.message}))
			continue
		}
		lines = append(lines, fmt.Sprintf("%s:%d:%d: %s (routines %s)", k.file, k.line, k.col, k.message, strings.Join(names, ", ")))
	}
	return lines
}

// formatProblem is one problem as FILE:LINE:COL: routine "NAME": message (no routine part for a
// problem of the file as a whole, or when the message names the routine already).
func formatProblem(p config.Problem) string {
	if p.Routine != "" && !strings.Contains(p.Message, fmt.Sprintf("%q", p.Routine)) {
		return fmt.Sprintf("%s:%d:%d: routine %q: %s", p.File, p.Line, p.Col, p.Routine, p.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
}
