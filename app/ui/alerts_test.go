package ui

import (
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"github.com/jonboulle/clockwork"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
)

// alertLog is an Alerter that records what was sent and withdrawn, as "sent N: TITLE" and
// "withdrawn N" lines (N counts sends from 1).
type alertLog struct {
	mu     sync.Mutex
	lines  []string
	alerts []Alert
}

func (l *alertLog) Send(a Alert) Withdraw {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.alerts = append(l.alerts, a)
	n := len(l.alerts)
	l.lines = append(l.lines, fmt.Sprintf("sent %d: %s", n, a.Title))
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.lines = append(l.lines, fmt.Sprintf("withdrawn %d", n))
		})
	}
}

// take returns the lines since the last take.
func (l *alertLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

func expectLines(t *testing.T, l *alertLog, want ...string) {
	t.Helper()
	if got := l.take(); !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
		t.Fatalf("notifications %q, want %q", got, want)
	}
}

// The diagnosis rule on a fake clock: nothing for the first 30 s of an episode, one notification
// once it has held that long, none again in the same episode; a stall that clears within the
// 30 s never notifies, and a new episode starts the count again.
func TestDiagnosisNotifiedOnlyOncePersisted(t *testing.T) {
	test.NewTempApp(t)
	clock := clockwork.NewFakeClockAt(fixtureNow)
	log := &alertLog{}
	p := NewTrayPresenter(&trayHost{}, &recorder{}, log, nil)
	s := standbyState()
	d := ownership.Diagnosis{Kind: ownership.DiagStalled, Message: "a run due at 08:30 has not been handled"}
	apply := func(diags ...ownership.Diagnosis) {
		s.Now = clock.Now()
		s.Owner.Diagnoses = diags
		p.Apply(s)
	}

	// A short stall: gone after 2 s, never notified.
	apply(d)
	clock.Advance(2 * time.Second)
	apply(d)
	clock.Advance(time.Second)
	apply()
	expectLines(t, log)

	// A diagnosis that persists: silent until 30 s, then one notification, with the warning icon.
	apply(d)
	for range 29 {
		clock.Advance(time.Second)
		apply(d)
	}
	expectLines(t, log) // 29 s
	clock.Advance(time.Second)
	apply(d)
	expectLines(t, log, "sent 1: Routinely: owner needs attention")
	if want, _ := DiagnosisAlert(s, d); log.alerts[0] != want || !want.Warning {
		t.Fatalf("sent %+v, want the diagnosis as a warning", log.alerts[0])
	}
	clock.Advance(time.Minute)
	apply(d)
	expectLines(t, log) // same episode

	// A second kind during the episode has its own count.
	d2 := ownership.Diagnosis{Kind: ownership.DiagNotHeartbeating, Message: "no heartbeat for 12s"}
	apply(d, d2)
	clock.Advance(DiagnosisPersist)
	apply(d, d2)
	expectLines(t, log, "sent 2: Routinely: owner needs attention")

	// The episode ends; a new one waits its 30 s again.
	clock.Advance(time.Second)
	apply()
	apply(d)
	clock.Advance(DiagnosisPersist - time.Second)
	apply(d)
	expectLines(t, log)
	clock.Advance(time.Second)
	apply(d)
	expectLines(t, log, "sent 3: Routinely: owner needs attention")
}

// This app's own handover or quit drain (the diagnosed owner record is this process's) is never
// notified, however long it lasts.
func TestOwnDiagnosisNeverNotified(t *testing.T) {
	test.NewTempApp(t)
	clock := clockwork.NewFakeClockAt(fixtureNow)
	log := &alertLog{}
	p := NewTrayPresenter(&trayHost{}, &recorder{}, log, nil)
	s := standbyState()
	s.Mode = session.ModeOwning
	self := *daemonRecord()
	self.PID, self.Role = os.Getpid(), ownership.RoleDesktop
	s.Owner.Record, s.Self = &self, &self
	s.Owner.Diagnoses = []ownership.Diagnosis{{Kind: ownership.DiagDraining,
		Message: fmt.Sprintf("the owner (pid %d) is stopping (shutting down or handing over) and waits for 0 run(s) in flight to finish", self.PID)}}
	for range 3 {
		s.Now = clock.Now()
		p.Apply(s)
		clock.Advance(DiagnosisPersist)
	}
	expectLines(t, log)
	// The same diagnosis about another process is notified (the test above is not vacuous).
	other := self
	other.PID = os.Getpid() + 1
	s.Owner.Record, s.Self, s.Mode = &other, nil, session.ModeStandby
	for range 2 {
		s.Now = clock.Now()
		p.Apply(s)
		clock.Advance(DiagnosisPersist)
	}
	expectLines(t, log, "sent 1: Routinely: owner needs attention")
}

// The takeover notification is withdrawn once its request is no longer pending — answered,
// withdrawn by the requester or expired, which a snapshot shows alike as no pending request —
// and when a newer request replaces it.
func TestTakeoverNotificationWithdrawn(t *testing.T) {
	test.NewTempApp(t)
	log := &alertLog{}
	p := NewTrayPresenter(&trayHost{}, &recorder{}, log, nil)
	s := standbyState()
	s.Mode = session.ModeOwning
	req := fixtureRequest()
	s.Pending = &req
	p.Apply(s)
	p.Apply(s) // the next second's snapshot: the same request, nothing new
	expectLines(t, log, "sent 1: Routinely: takeover request")
	if log.alerts[0].Warning {
		t.Error("a takeover request is a question, not a warning")
	}
	s.Pending = nil // Deny, Approve, the challenger gave up, or its deadline passed
	p.Apply(s)
	p.Apply(s)
	expectLines(t, log, "withdrawn 1")

	r2, r3 := fixtureRequest(), fixtureRequest()
	r2.ID, r3.ID = "req-2", "req-3"
	s.Pending = &r2
	p.Apply(s)
	s.Pending = &r3
	p.Apply(s)
	expectLines(t, log, "sent 2: Routinely: takeover request", "withdrawn 2", "sent 3: Routinely: takeover request")
	p.Withdraw() // the app quits with a request pending
	p.Withdraw()
	expectLines(t, log, "withdrawn 3")
}

// Routine failures and auto-pauses reach the Alerter as warnings, everything else as plain
// notifications.
func TestNotifierWarns(t *testing.T) {
	log := &alertLog{}
	n := Notifier{Alerts: log}
	_ = n.Notify("Good morning", "coffee")
	_ = n.Warn("backup failed", "exit status 3")
	want := []Alert{{Title: "Good morning", Body: "coffee"}, {Title: "backup failed", Body: "exit status 3", Warning: true}}
	if !reflect.DeepEqual(log.alerts, want) {
		t.Fatalf("alerts %+v, want %+v", log.alerts, want)
	}
}
