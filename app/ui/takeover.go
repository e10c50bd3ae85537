package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/internal/termsafe"
	"github.com/routinely/routinely/ownership"
)

// TakeoverPrompt is the dialog that asks the person whether another process may take over:
// who asks (pid, host, command line), a countdown to the request's deadline, Approve and Deny.
// The decision goes to a Decider (the ownership handle); no answer means denied, which the
// ownership handle enforces at the deadline whether or not this dialog is open.
type TakeoverPrompt struct {
	Request   ownership.Request
	decider   Decider
	onError   func(error)
	countdown *widget.Label
	approve   *widget.Button
	deny      *widget.Button
	content   *fyne.Container
	dialog    *dialog.CustomDialog
	decided   bool
}

// NewTakeoverPrompt builds the prompt for req; onError (may be nil) shows a failed Decide.
func NewTakeoverPrompt(req ownership.Request, d Decider, onError func(error)) *TakeoverPrompt {
	p := &TakeoverPrompt{Request: req, decider: d, onError: onError, countdown: widget.NewLabel("")}
	r := req.Requester
	who := widget.NewLabelWithStyle(TakeoverMessage(req)+".", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	who.Wrapping = fyne.TextWrapWord
	details := widget.NewLabel(termsafe.Escape(fmt.Sprintf("Host: %s\nCommand line: %s", r.Host, commandLine(r.Command))))
	details.Wrapping = fyne.TextWrapWord
	p.approve = widget.NewButtonWithIcon("Approve", theme.ConfirmIcon(), func() { p.decide(true) })
	p.approve.Importance = widget.HighImportance
	p.deny = widget.NewButtonWithIcon("Deny", theme.CancelIcon(), func() { p.decide(false) })
	parts := []fyne.CanvasObject{who, details}
	if req.Reason != "" {
		parts = append(parts, widget.NewLabel(termsafe.Escape("Reason: "+req.Reason)))
	}
	explain := widget.NewLabel("Approving lets running routines finish, then hands the schedule over; " +
		"this app keeps watching and takes it back when that process exits.")
	explain.Wrapping = fyne.TextWrapWord
	parts = append(parts, explain, p.countdown, container.NewHBox(layout.NewSpacer(), p.deny, p.approve))
	p.content = container.NewVBox(parts...)
	return p
}

// Content is the prompt's body (the dialog's content; the golden tests render it alone).
func (p *TakeoverPrompt) Content() fyne.CanvasObject { return p.content }

// Tick updates the countdown for now; call it on the UI goroutine.
func (p *TakeoverPrompt) Tick(now time.Time) {
	left := p.Request.ExpiresAt.Sub(now).Truncate(time.Second)
	text := "No answer by the deadline means denied."
	if left > 0 {
		text = fmt.Sprintf("Answer within %s, or it is denied.", Duration(left))
	}
	if p.decided {
		text = "Answer sent."
	}
	if p.countdown.Text != text {
		p.countdown.SetText(text)
	}
}

// Show opens the prompt as a dialog over win, brings the window up and focuses it.
func (p *TakeoverPrompt) Show(win fyne.Window, now time.Time) {
	p.Tick(now)
	if p.dialog == nil {
		p.dialog = dialog.NewCustomWithoutButtons("Takeover request", p.content, win)
		p.dialog.Resize(fyne.NewSize(520, 0))
	}
	win.Show()
	win.RequestFocus()
	p.dialog.Show()
}

// Hide closes the dialog (request answered, withdrawn or expired).
func (p *TakeoverPrompt) Hide() {
	if p.dialog != nil {
		p.dialog.Hide()
	}
}

// decide sends the answer off the UI goroutine: the handle may take a moment (it writes the
// reply file), and the window must stay responsive meanwhile.
func (p *TakeoverPrompt) decide(approve bool) {
	if p.decided {
		return
	}
	p.decided = true
	p.approve.Disable()
	p.deny.Disable()
	p.Tick(time.Now())
	id, d, onError := p.Request.ID, p.decider, p.onError
	go func() {
		if err := d.Decide(id, approve); err != nil && onError != nil {
			fyne.Do(func() { onError(fmt.Errorf("answer takeover request: %w", err)) })
		}
	}()
}

// commandLine prints argv the way a person would type it.
func commandLine(argv []string) string {
	if len(argv) == 0 {
		return "(unknown)"
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = fmt.Sprintf("%q", a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
