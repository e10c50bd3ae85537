package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/internal/termsafe"
	"github.com/routinely/routinely/ownership"
)

// WedgeBanner is the red banner shown while a diagnosis says the owner is not doing its job:
// one sentence per problem (what is wrong, since when, what to do), and, once a stuck owner may
// be ended, the button that ends it after a confirmation.
type WedgeBanner struct {
	widget.BaseWidget
	// Parent is the window the confirmation opens in (set by NewPresenter).
	Parent  fyne.Window
	actions Actions
	onError func(error)
	body    *widget.RichText
	end     *widget.Button
	endPID  int // the stuck owner the button ends; 0 while hidden
	since   time.Time
	role    ownership.Role
	box     *fyne.Container
}

// NewWedgeBanner builds a hidden banner; its button calls a.EndStuckOwner, and onError (may be
// nil) shows a failed one.
func NewWedgeBanner(a Actions, onError func(error)) *WedgeBanner {
	b := &WedgeBanner{actions: a, onError: onError, body: widget.NewRichText()}
	b.body.Wrapping = fyne.TextWrapWord
	b.end = widget.NewButtonWithIcon("", theme.MediaStopIcon(), b.confirmEnd)
	b.end.Importance = widget.HighImportance
	b.end.Hide()
	// The theme's error colour with its "on error" text colour: readable in light and dark.
	b.box = container.NewStack(canvas.NewRectangle(theme.Color(theme.ColorNameError)),
		container.NewPadded(container.NewBorder(nil, nil, nil, container.NewCenter(b.end), b.body)))
	b.ExtendBaseWidget(b)
	b.Hide()
	return b
}

// CreateRenderer draws the banner.
func (b *WedgeBanner) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(b.box) }

// Update shows the banner for the diagnoses in s, or hides it; call it on the UI goroutine.
func (b *WedgeBanner) Update(s session.State) {
	text := termsafe.Escape(BannerText(s)) // it quotes the hub's error and other devices' names
	if text == "" {
		b.endPID = 0
		if b.Visible() {
			b.Hide()
		}
		return
	}
	if len(b.body.Segments) != 1 || b.body.Segments[0].(*widget.TextSegment).Text != text {
		b.body.Segments = []widget.RichTextSegment{&widget.TextSegment{
			Text:  text,
			Style: widget.RichTextStyle{ColorName: theme.ColorNameForegroundOnError, TextStyle: fyne.TextStyle{Bold: true}},
		}}
		b.body.Refresh()
	}
	if st := s.Stuck; st != nil && st.Refused == "" && st.EndableIn == 0 {
		b.endPID, b.since, b.role = st.PID, st.Since, st.Role
		if label := EndStuckLabel(st.PID); b.end.Text != label {
			b.end.SetText(label)
		}
		b.end.Show()
	} else {
		b.endPID = 0
		b.end.Hide()
	}
	if !b.Visible() {
		b.Show()
	}
}

// EndStuckLabel is the banner's button for the stuck owner pid.
func EndStuckLabel(pid int) string { return fmt.Sprintf("End the stuck owner (pid %d)", pid) }

// Confirmation dialog texts (exported for tests).
const (
	EndStuckTitle   = "End the stuck owner?"
	EndStuckConfirm = "End it"
)

// EndStuckMessage says what ending the stuck owner does, for the confirmation.
func EndStuckMessage(pid int, role ownership.Role, since time.Time) string {
	return fmt.Sprintf("The %s (pid %d) that owns your routines has not responded since %s.\n\n"+
		"Routinely will ask it to quit and, if it has not exited 5 seconds later, force it to.\n"+
		"This app then runs your routines. A run that process was in the middle of is\n"+
		"recorded as interrupted and not run again.",
		roleName(role), pid, since.Local().Format(time.TimeOnly))
}

// confirmEnd asks the person to confirm, then ends the stuck owner the button names.
func (b *WedgeBanner) confirmEnd() {
	pid, role, since := b.endPID, b.role, b.since
	if pid == 0 {
		return
	}
	do := func(ok bool) {
		if ok {
			if err := b.actions.EndStuckOwner(pid); err != nil && b.onError != nil {
				b.onError(err)
			}
		}
	}
	if b.Parent == nil { // no window to ask in (never the case in the app)
		return
	}
	msg := widget.NewLabel(EndStuckMessage(pid, role, since))
	d := dialog.NewCustomConfirm(EndStuckTitle, EndStuckConfirm, "Cancel", msg, do, b.Parent)
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
}

// BannerText is the banner's text for s: one sentence per diagnosis that means the owner is not
// doing its job, and per hub problem (unreachable, a routine defined differently on another
// device), saying what is wrong, since when, and what the person can do; "" when none applies.
func BannerText(s session.State) string {
	var lines []string
	for _, d := range s.Owner.Diagnoses {
		if line := DiagnosisSentence(s, d); line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(append(lines, hubLines(s)...), "\n")
}

// DiagnosisSentence is the one sentence a person reads about the owner diagnosis d seen in s
// (the banner's line and the notification's body): what is wrong, since when, what to do, and
// no command line. It is "" for a diagnosis not worth showing (an unreadable record, which the
// owner rewrites on its next heartbeat).
func DiagnosisSentence(s session.State, d ownership.Diagnosis) string {
	return bannerLine(s, d, s.Owner.Record)
}

// hubLines are the banner's sentences about the hub the owner uses (none without a hub): that
// this device cannot reach it, and each shared routine another device defines differently.
func hubLines(s session.State) []string {
	h := s.Hub
	if h == nil {
		return nil
	}
	var lines []string
	if !h.Connected {
		since := ""
		if !h.Since.IsZero() {
			since = " since " + Clock(h.Since, s.Now)
		}
		why := ""
		if e := firstLine(h.Error); e != "" {
			why = " (" + e + ")"
		}
		meanwhile := "routines shared with your other devices do not run here until it is back"
		if h.OfflineLocal {
			meanwhile = `this device runs the routines shared with your other devices alone ([hub] offline = "local"), and another device may run them too`
		}
		lines = append(lines, fmt.Sprintf("This device has not reached the hub at %s%s%s, so %s: check that the hub is running and that this device is online.",
			h.URL, since, why, meanwhile))
	}
	for _, d := range h.Drift {
		lines = append(lines, fmt.Sprintf("The routine %q is defined differently on %s than here, so it runs under one name with different definitions: make it the same in routines.toml on every device.",
			d.Routine, strings.Join(d.Devices, ", ")))
	}
	return lines
}

// firstLine is the first line of msg, without surrounding space: one line of an error for a
// sentence.
func firstLine(msg string) string {
	msg, _, _ = strings.Cut(strings.TrimSpace(msg), "\n")
	return strings.TrimSpace(msg)
}

// bannerLine is the banner's sentence for diagnosis d of the owner r (nil when unknown).
func bannerLine(s session.State, d ownership.Diagnosis, r *ownership.Record) string {
	who := "The owner"
	if r != nil {
		who = fmt.Sprintf("The %s that owns your routines (pid %d)", roleName(r.Role), r.PID)
		if s.Mode == session.ModeOwning {
			who = "This app"
		}
	}
	since := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return " since " + Clock(t, s.Now)
	}
	switch d.Kind {
	case ownership.DiagNotHeartbeating:
		st := s.Stuck
		switch {
		case st == nil:
			return fmt.Sprintf("%s has not responded%s (suspended or hung), so no routine runs.", who, since(d.Since))
		case st.Refused != "":
			return fmt.Sprintf("%s has not responded%s, so no routine runs, and it cannot be ended from here: %s.",
				who, since(st.Since), st.Refused)
		case st.EndableIn > 0:
			return fmt.Sprintf("%s has not responded%s, so no routine runs; if it stays silent, you can end it from here %s.",
				who, since(st.Since), Countdown(s.Now.Add(st.EndableIn), s.Now))
		}
		return fmt.Sprintf("%s has not responded%s, so no routine runs: ending it stops that process and this app runs your routines.",
			who, since(st.Since))
	case ownership.DiagStalled:
		return fmt.Sprintf("%s is alive but has not started the run due at %s; quitting it lets this app take over.",
			who, Clock(d.Since, s.Now))
	case ownership.DiagDraining:
		return fmt.Sprintf("%s has been finishing its runs in flight%s before it stops; a run may be stuck (see History).",
			who, since(d.Since))
	case ownership.DiagLockHeldByOther, ownership.DiagGuardReplaced:
		return sentence(d.Message)
	case ownership.DiagJournalReplaced:
		return fmt.Sprintf("%s found journal.db deleted or replaced%s, so no routine runs: it puts its journal back once its runs in flight end; move away any other file named journal.db.",
			who, since(d.Since))
	case ownership.DiagJournalUnwritable:
		return fmt.Sprintf("%s cannot write the run journal%s, so no routine runs: close the program that holds journal.db open, or free disk space.",
			who, since(d.Since))
	}
	return "" // record-unreadable: the owner rewrites its record on its next heartbeat
}

// roleName names a role for a person.
func roleName(r ownership.Role) string {
	if r == ownership.RoleDesktop {
		return "desktop app"
	}
	if r == "" {
		return "process"
	}
	return string(r)
}

// sentence capitalises msg and ends it with a full stop.
func sentence(msg string) string {
	if msg == "" {
		return ""
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}
