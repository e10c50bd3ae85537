package ui

import (
	"os"
	"time"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
)

// Alert is one desktop notification the app sends.
type Alert struct {
	Title, Body string
	// Warning marks a failure or a problem that needs the person (a routine failed, the owner
	// is stuck): it is shown with a warning icon instead of the app's own.
	Warning bool
}

// Notification is a as Fyne's notification (title and body), for Fyne's notifier and its tests.
func (a Alert) Notification() *fyne.Notification {
	return &fyne.Notification{Title: a.Title, Content: a.Body}
}

// Withdraw takes a sent notification off the screen (and out of the notification list). It is
// safe to call more than once, from any goroutine, even before the notification was delivered.
type Withdraw func()

// Alerter sends the app's desktop notifications.
type Alerter interface {
	// Send shows a without waiting for the notification service and returns the function that
	// withdraws it; where the system cannot withdraw a notification, that function does nothing.
	Send(a Alert) Withdraw
}

// FyneAlerter sends through Fyne (fyne.App.SendNotification), off the caller's goroutine since
// a D-Bus call can be slow. Fyne gives no way to withdraw a notification or choose its icon,
// so Withdraw does nothing and warnings show the app's icon; the desktop uses it where it has
// no notifier of its own, and tests use it with Fyne's test app.
type FyneAlerter struct {
	App fyne.App
	// Sync sends on the caller's goroutine (tests: test.AssertNotificationSent).
	Sync bool
}

// Send shows a through Fyne; see FyneAlerter.
func (f FyneAlerter) Send(a Alert) Withdraw {
	if f.Sync {
		f.App.SendNotification(a.Notification())
	} else {
		go f.App.SendNotification(a.Notification())
	}
	return func() {}
}

// Notifier implements scheduler.Notifier (and its warnings) with the app's desktop
// notifications. Sending never waits for the notification service, so a slow one never holds
// up a routine.
type Notifier struct{ Alerts Alerter }

// Notify shows title and body as a desktop notification (a routine's notify action, a recovery).
func (n Notifier) Notify(title, body string) error {
	n.Alerts.Send(Alert{Title: title, Body: body})
	return nil
}

// Warn shows title and body as a warning notification (a routine failed or was auto-paused).
func (n Notifier) Warn(title, body string) error {
	n.Alerts.Send(Alert{Title: title, Body: body, Warning: true})
	return nil
}

// DiagnosisPersist is how long an owner diagnosis must have held, in every snapshot, before it
// is notified: a machine stall (a loaded CPU, a laptop waking up) makes an owner look stuck for
// a second or two, and such an alert would only be noise. 30 s is also the shortest silence
// after which a wedged owner may be ended (kill-wedged's default threshold), so the alert comes
// when there is something to do about it.
const DiagnosisPersist = 30 * time.Second

// diagnosisAlerts decides which owner diagnoses become notifications; it is the one place of
// that rule (see due). The zero value is ready to use.
type diagnosisAlerts struct {
	since map[ownership.DiagnosisKind]time.Time // when each present kind was first seen in a row
	sent  map[ownership.DiagnosisKind]bool      // kinds notified in their current episode
}

// due returns the diagnoses in s to notify now. A diagnosis is notified once per episode (an
// episode ends when a snapshot no longer shows its kind), and only once it has been shown for
// DiagnosisPersist, measured between snapshot times (s.Now: the session's clock, monotonic
// within the process). A diagnosis about this process itself (the owner record is this app's:
// its own handover or quit drain) is never notified: the person caused it, and the window says
// it already.
func (g *diagnosisAlerts) due(s session.State) []ownership.Diagnosis {
	if g.since == nil {
		g.since, g.sent = map[ownership.DiagnosisKind]time.Time{}, map[ownership.DiagnosisKind]bool{}
	}
	self := s.Owner.Record != nil && s.Owner.Record.PID == os.Getpid()
	present := map[ownership.DiagnosisKind]bool{}
	var out []ownership.Diagnosis
	for _, d := range s.Owner.Diagnoses {
		if self {
			continue
		}
		present[d.Kind] = true
		first, seen := g.since[d.Kind]
		if !seen {
			first = s.Now
			g.since[d.Kind] = first
		}
		if !g.sent[d.Kind] && s.Now.Sub(first) >= DiagnosisPersist {
			g.sent[d.Kind] = true
			out = append(out, d)
		}
	}
	for k := range g.since {
		if !present[k] {
			delete(g.since, k)
			delete(g.sent, k)
		}
	}
	return out
}
