package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
)

// WedgeBanner is the red banner shown while a diagnosis says the owner is not doing its job.
type WedgeBanner struct {
	widget.BaseWidget
	body *widget.RichText
	box  *fyne.Container
	text string // shown now: the state arrives every second, the text rarely changes
}

// NewWedgeBanner builds a hidden banner.
func NewWedgeBanner() *WedgeBanner {
	b := &WedgeBanner{body: widget.NewRichText()}
	b.body.Wrapping = fyne.TextWrapWord
	// The theme's error colour with its "on error" text colour: readable in light and dark.
	b.box = container.NewStack(canvas.NewRectangle(theme.Color(theme.ColorNameError)), container.NewPadded(b.body))
	b.ExtendBaseWidget(b)
	b.Hide()
	return b
}

// CreateRenderer draws the banner.
func (b *WedgeBanner) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(b.box) }

// Update shows the banner for the wedge diagnoses in s, or hides it; call it on the UI goroutine.
func (b *WedgeBanner) Update(s session.State) {
	text := BannerText(s.Owner.Diagnoses)
	if text == "" {
		if b.Visible() {
			b.Hide()
		}
		return
	}
	if text != b.text {
		b.text = text
		b.body.Segments = []widget.RichTextSegment{&widget.TextSegment{
			Text:  text,
			Style: widget.RichTextStyle{ColorName: theme.ColorNameForegroundOnError, TextStyle: fyne.TextStyle{Bold: true}},
		}}
		b.body.Refresh()
	}
	if !b.Visible() {
		b.Show()
	}
}

// BannerText is the banner's text for the diagnoses that mean the owner is wedged, each with
// what the person can do; "" when none applies.
func BannerText(ds []ownership.Diagnosis) string {
	var lines []string
	for _, d := range ds {
		if advice, ok := wedgeAdvice[d.Kind]; ok {
			lines = append(lines, d.Message+" — "+advice)
		}
	}
	return strings.Join(lines, "\n")
}

// wedgeAdvice says what to do about each diagnosis that warrants the banner.
var wedgeAdvice = map[ownership.DiagnosisKind]string{
	ownership.DiagNotHeartbeating: "the owner may be suspended or hung. Wait a moment, or end it with " +
		"`routinely daemon --takeover --kill-wedged` and this app takes over.",
	ownership.DiagStalled: "routines are overdue although the owner is alive. Quit that owner " +
		"(or run `routinely daemon --takeover`) so a healthy one takes over.",
	ownership.DiagLockHeldByOther: "another process holds the lock (often a child that inherited it). " +
		"End that process to let an owner take over.",
	ownership.DiagDraining: "the owner is taking a long time to finish its runs before handing over; " +
		"a run may be stuck. Check `routinely history` or end the stuck run.",
	ownership.DiagGuardReplaced: "owner.lock was deleted or replaced. Do not delete it; restart Routinely.",
	ownership.DiagJournalUnwritable: "no routine runs until the journal can be written. Close the program " +
		"that holds journal.db open, or free disk space; the slots missed meanwhile appear in the history.",
}
