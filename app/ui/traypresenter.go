package ui

import (
	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
)

// TrayPresenter applies session.State snapshots to the tray (menu and icon look) and sends the
// notifications. It needs no UI loop: the app process never runs Fyne's loop, which runs only in
// the window process while the window is open. Call Apply from one goroutine at a time.
type TrayPresenter struct {
	Menu *TrayMenu
	Look Look
	// Alerts sends the notifications (never waiting for the notification service).
	Alerts Alerter
	// OnRequest (may be nil) is called once per new takeover request, after its notification:
	// the desktop opens the window, where the prompt asks for an answer.
	OnRequest func(ownership.Request)

	host      TrayHost
	lookSet   bool
	diagnoses diagnosisAlerts // which owner diagnoses are notified, and when
	request   string          // id of the takeover request last notified
	withdraw  Withdraw        // takes that request's notification back (nil: none shown)
}

// NewTrayPresenter builds the tray menu shown by host (may be nil in tests) with actions a;
// alerts sends notifications; onError (may be nil) reports a failed tray action.
func NewTrayPresenter(host TrayHost, a Actions, alerts Alerter, onError func(error)) *TrayPresenter {
	return &TrayPresenter{Menu: NewTrayMenu(a, host, onError), Alerts: alerts, host: host}
}

// Apply shows s in the tray: menu, icon look; a new takeover request sends a notification and
// calls OnRequest, and that notification is withdrawn once the request is no longer pending
// (answered, withdrawn by the requester, expired, or this app no longer owns); an owner
// diagnosis sends one notification per episode once it has persisted (diagnosisAlerts.due).
func (p *TrayPresenter) Apply(s session.State) {
	p.Menu.Update(s)
	p.setLook(LookFor(s))
	p.notifyRequest(s)
	p.notifyDiagnoses(s)
}

func (p *TrayPresenter) setLook(l Look) {
	if p.lookSet && l == p.Look {
		return
	}
	p.Look, p.lookSet = l, true
	if p.host != nil {
		p.host.SetIcon(l.Resource())
	}
}

func (p *TrayPresenter) notifyRequest(s session.State) {
	id := ""
	if s.Pending != nil {
		id = s.Pending.ID
	}
	if id == p.request {
		return
	}
	// The request shown is no longer the pending one: its question has no answer to give.
	p.Withdraw()
	p.request = id
	if s.Pending == nil {
		return
	}
	p.withdraw = p.Alerts.Send(TakeoverAlert(*s.Pending))
	if p.OnRequest != nil {
		p.OnRequest(*s.Pending)
	}
}

// Withdraw takes back the notification that still asks for an answer (a takeover request): the
// app is quitting, and no later snapshot will. Call it after the last Apply, from the goroutine
// that called Apply.
func (p *TrayPresenter) Withdraw() {
	if p.withdraw != nil {
		p.withdraw()
		p.withdraw = nil
	}
	p.request = ""
}

func (p *TrayPresenter) notifyDiagnoses(s session.State) {
	for _, d := range p.diagnoses.due(s) {
		if a, ok := DiagnosisAlert(s, d); ok {
			p.Alerts.Send(a)
		}
	}
}

// DiagnosisAlert is the notification for the diagnosis d seen in s (exported for tests): its
// body is the banner's sentence (DiagnosisSentence). ok is false for a diagnosis the banner
// does not show either, which is not notified.
func DiagnosisAlert(s session.State, d ownership.Diagnosis) (a Alert, ok bool) {
	body := DiagnosisSentence(s, d)
	return Alert{Title: "Routinely: owner needs attention", Body: body, Warning: true}, body != ""
}

// TakeoverAlert is the notification sent for a takeover request (exported for tests).
func TakeoverAlert(r ownership.Request) Alert {
	return Alert{Title: "Routinely: takeover request", Body: TakeoverMessage(r)}
}
