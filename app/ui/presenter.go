package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/routinely/routinely/ownership"
)

// Presenter applies State snapshots to the window, the tray menu and icon, the takeover prompt
// and notifications. All its methods run on the UI goroutine.
type Presenter struct {
	App     fyne.App
	Window  fyne.Window
	View    *MainView
	Tray    *TrayMenu
	Prompt  *TakeoverPrompt // the open takeover prompt, nil when none
	Look    Look
	actions Actions
	// Notify sends a notification; the desktop sends off the UI goroutine (a D-Bus call can
	// take a while), tests keep it synchronous for test.AssertNotificationSent.
	Notify func(*fyne.Notification)

	lookSet   bool
	diagnosed map[ownership.DiagnosisKind]bool // diagnoses already notified, one per episode
	last      State
}

// NewPresenter builds the window content and tray menu for app a, shown in win.
func NewPresenter(app fyne.App, win fyne.Window, a Actions) *Presenter {
	p := &Presenter{App: app, Window: win, actions: a, diagnosed: map[ownership.DiagnosisKind]bool{}}
	p.Notify = app.SendNotification
	p.View = NewMainView(a)
	p.Tray = NewTrayMenu(a, p.View.ShowError)
	win.SetContent(p.View.Content)
	return p
}

// Apply shows s: window, tray menu and icon; a new takeover request opens the prompt and sends
// a notification; a new wedge diagnosis sends one notification per episode.
func (p *Presenter) Apply(s State) {
	p.last = s
	p.View.Update(s)
	p.Tray.Update(s)
	p.setLook(LookFor(s))
	p.prompt(s)
	p.notifyDiagnoses(s)
}

// Last is the state most recently applied.
func (p *Presenter) Last() State { return p.last }

func (p *Presenter) setLook(l Look) {
	if p.lookSet && l == p.Look {
		return
	}
	p.Look, p.lookSet = l, true
	if d, ok := p.App.(desktop.App); ok {
		d.SetSystemTrayIcon(l.Resource())
	}
}

func (p *Presenter) prompt(s State) {
	switch {
	case s.Pending == nil && p.Prompt != nil:
		p.Prompt.Hide()
		p.Prompt = nil
	case s.Pending != nil && (p.Prompt == nil || p.Prompt.Request.ID != s.Pending.ID):
		if p.Prompt != nil {
			p.Prompt.Hide()
		}
		p.Prompt = NewTakeoverPrompt(*s.Pending, p.actions, p.View.ShowError)
		p.Notify(TakeoverNotification(*s.Pending))
		p.Prompt.Show(p.Window, s.Now)
	case p.Prompt != nil:
		p.Prompt.Tick(s.Now)
	}
}

func (p *Presenter) notifyDiagnoses(s State) {
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
