package ui

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/journal"
)

// fixtureNow is the instant every fixture is seen at; golden files depend on it.
var fixtureNow = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

func at(h, m, s int) *time.Time {
	t := time.Date(2026, 3, 2, h, m, s, 0, time.UTC)
	return &t
}

func fixtureRoutines() []scheduler.RoutineState {
	tomorrow := time.Date(2026, 3, 3, 8, 0, 0, 0, time.UTC)
	return []scheduler.RoutineState{
		{
			Name: "morning-briefing", Schedule: "at 08:00 Mon–Fri", Action: "run", Next: &tomorrow,
			Last: &journal.Run{ID: 7, Routine: "morning-briefing", Slot: *at(8, 0, 0), Started: at(8, 0, 1),
				Outcome: journal.OutcomeSuccess, Duration: 2300 * time.Millisecond, LateBy: time.Second},
		},
		{
			Name: "page-watch", Schedule: "every 30m", Action: "watch", Next: at(9, 42, 0),
			Last: &journal.Run{ID: 8, Routine: "page-watch", Slot: *at(9, 0, 0), Started: at(9, 0, 0),
				Outcome: journal.OutcomeFailed, Duration: 1100 * time.Millisecond},
		},
		{Name: "heartbeat", Schedule: "every 30s", Action: "ping", Paused: true},
	}
}

func daemonRecord() *ownership.Record {
	return &ownership.Record{
		Token: "t-daemon", Epoch: 12, PID: 4242, Host: "laptop", Role: ownership.RoleDaemon,
		AcquiredAt: *at(7, 55, 0), HeartbeatAt: *at(9, 29, 58), LastTickAt: *at(9, 29, 50), // 9:29:50: a slot recorded skipped
		LastJob:             &ownership.JobInfo{Routine: "heartbeat", Slot: *at(9, 29, 30), Started: *at(9, 29, 30), Finished: at(9, 29, 31)},
		HeartbeatIntervalMS: 2000, State: ownership.StateOwning,
	}
}

// standbyState: a daemon owns, this app observes.
func standbyState() session.State {
	return session.State{
		Mode: session.ModeStandby, Now: fixtureNow, Routines: fixtureRoutines(),
		Owner:      ownership.Status{Held: true, Alive: true, Record: daemonRecord(), HeartbeatAge: 2 * time.Second},
		ConfigPath: "/home/ann/.config/routinely/routines.toml", Policy: ownership.PolicyAsk,
	}
}

func fixtureRequest() ownership.Request {
	return ownership.Request{
		ID: "req-1", TargetToken: "t-desktop",
		Requester: ownership.Requester{PID: 4242, Host: "laptop", Role: ownership.RoleDaemon,
			Command: []string{"routinely", "daemon", "--takeover"}},
		RequestedAt: fixtureNow, ExpiresAt: fixtureNow.Add(60 * time.Second),
	}
}

// recorder is a stand-in for the session behind the routine buttons: it records what the
// person asked for. (The takeover tests use a real ownership handle instead.)
type recorder struct {
	mu      sync.Mutex
	calls   []string
	openErr error // what OpenConfig returns
}

func (r *recorder) add(s string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
	return nil
}
func (r *recorder) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}
func (r *recorder) RunNow(n string) error { return r.add("run " + n) }
func (r *recorder) Decide(id string, approve bool) error {
	return r.add(fmt.Sprint("decide ", id, " ", approve))
}
func (r *recorder) SetPaused(n string, p bool) error {
	if p {
		return r.add("pause " + n)
	}
	return r.add("resume " + n)
}
func (r *recorder) TakeBack()                          { r.add("take back") }
func (r *recorder) EndStuckOwner(pid int) error        { return r.add(fmt.Sprint("end stuck ", pid)) }
func (r *recorder) SetStartAtLogin(on bool) error      { return r.add(fmt.Sprint("login ", on)) }
func (r *recorder) SetPolicy(p ownership.Policy) error { return r.add("policy " + string(p)) }
func (r *recorder) OpenConfig() error                  { return r.openErr }
func (r *recorder) ShowWindow()                        { r.add("show") }
func (r *recorder) Quit()                              { r.add("quit") }
func (r *recorder) Output(id int64) ([]byte, error) {
	return []byte(fmt.Sprintf("- old headline\n+ new headline (run %d)\n", id)), nil
}
func (r *recorder) History(routine string, _ int) ([]journal.Run, error) {
	r.add("history " + routine)
	return []journal.Run{*fixtureRoutines()[1].Last}, nil
}

func TestMain(m *testing.M) {
	if runHelperIfAsked() {
		return
	}
	time.Local = time.UTC // golden files print times in UTC
	os.Setenv("LANGUAGE", "en")
	m.Run()
}

// assertMarkup renders o alone on a canvas of size and compares it with testdata/name.
func assertMarkup(t *testing.T, name string, o fyne.CanvasObject, size fyne.Size) {
	t.Helper()
	c := test.NewCanvas()
	c.SetPadded(false)
	c.SetContent(o)
	c.Resize(size)
	test.AssertRendersToMarkup(t, name, c)
}
