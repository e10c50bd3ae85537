package ui

import (
	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
)

// TrayPresenter applies session.State snapshots to the tray (menu and icon look) and sends the
// notifications. It needs no UI loop, so the tray works while the window's toolkit loop has not
// started (a --background app never pays for it until its window is opened). Call Apply from
// one goroutine at a time.
type TrayPresenter struct {
	Menu *TrayMenu
	Look Look
	// Notify sends a notification; the desktop sends off the caller's goroutine (a D-Bus call
	// can take a while), tests keep it synchronous for test.AssertNotificationSent.
	Notify func(*fyne.Notification)
	// OnRequest (may be nil) is called once per new takeover request, after its notification:
	// the desktop opens the window, where the prompt asks for an answer.
	OnRequest func(ownership.Request)

	host      TrayHost
	lookSet   bool
	diagnosed map[ownership.DiagnosisKind]bool // diagnoses already notified, one per episode
	request   string                           // id of the takeover request last notified
}

// NewTrayPresenter builds the tray menu shown by host (may be nil in tests) with actions a;
// notify sends notifications; onError (may be nil) reports a failed tray action.
func NewTrayPresenter(host TrayHost, a Actions, notify func(*fyne.Notification), onError func(error)) *TrayPresenter {
	return &TrayPresenter{
		Menu: NewTrayMenu(a, host, onError), Notify: notify, host: host,
		diagnosed: map[ownership.DiagnosisKind]bool{},
	}
}

// Apply shows s in the tray: menu, icon look; a new takeover request sends a notification and
// calls OnRequest; a new wedge diagnosis sends one notification per episode.
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
	if s.Pending == nil {
		p.request = ""
		return
	}
	if s.Pending.ID == p.request {
		return
	}
	p.request = s.Pending.ID
	p.Notify(TakeoverNotification(*s.Pending))
	if p.OnRequest != nil {
		p.OnRequest(*s.Pending)
	}
}

func (p *TrayPresenter) notifyDiagnoses(s session.State) {
	now := map[ownership.DiagnosisKind]bool{}
	for _, d := range s.Owner.Diagnoses {
		now[d.Kind] = true
		if !p.diagnosed[d.Kind] {
			p.Notify(DiagnosisNotification(d))
		}
	}
	p.diagnosed = now
}

// DiagnosisNotification is the notification sent for d (exported for tests).
func DiagnosisNotification(d ownership.Diagnosis) *fyne.Notification {
	return &fyne.Notification{Title: "Routinely: owner needs attention", Content: d.Message}
}

// TakeoverNotification is the notification sent for a takeover request (exported for tests).
func TakeoverNotification(r ownership.Request) *fyne.Notification {
	return &fyne.Notification{Title: "Routinely: takeover request", Content: TakeoverMessage(r)}
}
