package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/internal/skew"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// Routine statuses shown in the table.
const (
	StatusIdle    = "idle"
	StatusRunning = "running"
	StatusLate    = "late"
	StatusPaused  = "paused"
	StatusFailing = "failing"
	StatusInvalid = "invalid"
)

// RoutineStatus names the state of r at now for the table's status line.
func RoutineStatus(r scheduler.RoutineState, now time.Time) string {
	switch {
	case r.Disabled != "":
		return StatusInvalid
	case r.Running:
		return StatusRunning
	case r.Paused:
		return StatusPaused
	case r.Last != nil && failed(r.Last.Outcome):
		return StatusFailing
	case r.IsOverdue(now):
		return StatusLate
	}
	return StatusIdle
}

// StatusText is the table's status line for r at now, with why (paused by whom or until when,
// invalid and what is wrong), and its colour.
func StatusText(r scheduler.RoutineState, now time.Time) (string, widget.Importance) {
	switch RoutineStatus(r, now) {
	case StatusInvalid:
		return "invalid: " + r.Disabled, widget.DangerImportance
	case StatusRunning:
		return "running", widget.HighImportance
	case StatusPaused:
		s := "paused"
		switch {
		case r.PausedInFile:
			s += " in routines.toml"
		case r.PauseUntil != nil:
			s += " until " + Clock(*r.PauseUntil, now)
		}
		if r.PauseNote != "" && !r.PausedInFile {
			s += ": " + r.PauseNote
		}
		return s, widget.WarningImportance
	case StatusFailing:
		return "failing", widget.DangerImportance
	case StatusLate:
		return "overdue", widget.DangerImportance
	}
	return "idle", widget.LowImportance
}

func failed(outcome string) bool {
	switch outcome {
	case journal.OutcomeFailed, journal.OutcomeTimeout, journal.OutcomeCrashed,
		journal.OutcomeInterrupted, journal.OutcomeSelectorMissing:
		return true
	}
	return false
}

// Duration prints d compactly and stably for a label refreshed every second: "850ms", "42s",
// "3m 05s", "2h 04m", "3d 4h".
func Duration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d == 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour && d%time.Minute == 0:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Clock prints t relative to now's day: "15:04" today, "Mon 15:04" within a week, else a date.
func Clock(t, now time.Time) string {
	t, now = t.In(time.Local), now.In(time.Local)
	ty, tm, td := t.Date()
	ny, nm, nd := now.Date()
	switch {
	case ty == ny && tm == nm && td == nd:
		return t.Format("15:04:05")
	case t.Sub(now).Abs() < 6*24*time.Hour:
		return t.Format("Mon 15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// Countdown prints the time until t: "in 4m 10s", "now", or "12s ago". Beyond two minutes it
// counts whole minutes: a person does not need the seconds, and each new text costs the window
// a redraw.
func Countdown(t, now time.Time) string {
	d := t.Sub(now).Truncate(time.Second)
	if d.Abs() >= 2*time.Minute {
		d = d.Truncate(time.Minute)
	}
	switch {
	case d > 0:
		return "in " + Duration(d)
	case d == 0:
		return "now"
	}
	return Duration(d) + " ago"
}

// Relative prints the time until or since t for a label a person glances at: "in 4m",
// "12m ago", "in 14h 07m", "now", and "in < 1m" or "< 1m ago" when closer than a minute. Its
// text changes at most once a minute, where Countdown's changes every second: each new text
// costs the window a redraw and a cached texture (make footprint, window shown: 5.4 % of a core
// while the dashboard counted seconds, 3.2 % since). Countdown stays for what a person waits
// on, such as the seconds left to answer.
func Relative(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d == 0:
		return "now"
	case d > 0 && d < time.Minute:
		return "in < 1m"
	case d < 0 && d > -time.Minute:
		return "< 1m ago"
	}
	return Countdown(now.Add(d.Truncate(time.Minute)), now)
}

// Past is t, a moment stamped by another process's or device's clock (a heartbeat, a tick, a
// device last seen), for Relative and Countdown: never later than now (skew.Age), so a stamp
// from a clock that runs a little ahead reads "now", not "in 3s".
func Past(t, now time.Time) time.Time { return now.Add(-skew.Age(t, now)) }

// Who names an owner for a person: "this app", "daemon", "desktop app".
func Who(s session.State) string {
	rec := ownerRecord(s)
	switch {
	case s.Mode == session.ModeOwning:
		return "this app"
	case rec == nil && s.Owner.Held:
		return "unknown process"
	case rec == nil || !s.Owner.Held:
		return "nobody"
	case rec.Role == ownership.RoleDaemon:
		return "daemon"
	}
	return "desktop app"
}

// OwnerLine is the tray's disabled status line.
func OwnerLine(s session.State) string {
	switch s.Mode {
	case session.ModeStarting:
		return "Starting…"
	case session.ModeStopping:
		return "Quitting: finishing runs…"
	case session.ModeOwning:
		if len(s.Routines) == 1 {
			return "Owner: this app · 1 routine"
		}
		return fmt.Sprintf("Owner: this app · %d routines", len(s.Routines))
	}
	rec := s.Owner.Record
	if !s.Owner.Held {
		return "No owner"
	}
	if rec == nil {
		return "Owner: unknown process"
	}
	line := fmt.Sprintf("Owner: %s pid %d on %s", Who(s), rec.PID, rec.Host)
	if s.Mode == session.ModeTakingBack {
		line = "Taking back from " + strings.TrimPrefix(line, "Owner: ") + "…"
	}
	return line
}

// RequesterText names the process behind a takeover request: "daemon (pid 4242)".
func RequesterText(r ownership.Requester) string {
	role := string(r.Role)
	if role == "" {
		role = "process"
	}
	return fmt.Sprintf("%s (pid %d)", role, r.PID)
}

// TakeoverMessage is the notification body for a takeover request.
func TakeoverMessage(r ownership.Request) string {
	who := "Another Routinely desktop app"
	if r.Requester.Role == ownership.RoleDaemon {
		who = "A Routinely daemon"
	}
	return fmt.Sprintf("%s (pid %d) asks to take over your routines", who, r.Requester.PID)
}

// ProblemText prints a validation problem as "file:line:col: message".
func ProblemText(p config.Problem) string {
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
}
