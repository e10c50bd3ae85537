package ui

import (
	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/session"
)

// Presenter applies session.State snapshots to the window: its views and the takeover prompt. All its
// methods run on the UI goroutine. The tray and notifications are TrayPresenter's, which needs no
// UI loop.
type Presenter struct {
	Window  fyne.Window
	View    *MainView
	Prompt  *TakeoverPrompt // the open takeover prompt, nil when none
	actions Actions
	last    session.State
}

// NewPresenter builds the window content, shown in win.
func NewPresenter(win fyne.Window, a Actions) *Presenter {
	p := &Presenter{Window: win, actions: a}
	p.View = NewMainView(a)
	p.View.Banner.Parent = win
	win.SetContent(NewTipLayer(p.View.Content)) // tooltips of cut-off texts
	return p
}

// Apply shows s in the window; a new takeover request opens the prompt (showing and focusing
// the window), an answered, withdrawn or expired one closes it.
func (p *Presenter) Apply(s session.State) {
	p.last = s
	p.View.Update(s)
	p.prompt(s)
}

// Last is the state most recently applied.
func (p *Presenter) Last() session.State { return p.last }

func (p *Presenter) prompt(s session.State) {
	switch {
	case s.Pending == nil && p.Prompt != nil:
		p.Prompt.Hide()
		p.Prompt = nil
	case s.Pending != nil && (p.Prompt == nil || p.Prompt.Request.ID != s.Pending.ID):
		if p.Prompt != nil {
			p.Prompt.Hide()
		}
		p.Prompt = NewTakeoverPrompt(*s.Pending, p.actions, p.View.ShowError)
		p.Prompt.Show(p.Window, s.Now)
	case p.Prompt != nil:
		p.Prompt.Tick(s.Now)
	}
}
