package ui

import (
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/internal/termsafe"
)

// Fyne has no tooltips of its own. These show one in a TipLayer laid over the window's content:
// drawn above it but taking no pointer event (an overlay, like a pop-up, would take every event
// while it shows, so the first click on the widget beneath would be lost).

// TipLayer holds a window's content and draws the tooltip of the TipLabel under the pointer
// above it. Put it at the root of the window (NewPresenter does).
type TipLayer struct {
	widget.BaseWidget
	content fyne.CanvasObject
	text    *widget.Label
	bubble  *fyne.Container
	box     *fyne.Container
	owner   fyne.CanvasObject // the widget whose tooltip shows, nil when none
}

// tipLayers finds the layer of a canvas (a widget knows its canvas, not its ancestors).
var tipLayers sync.Map // fyne.Canvas → *TipLayer

// NewTipLayer returns a layer holding content.
func NewTipLayer(content fyne.CanvasObject) *TipLayer {
	t := &TipLayer{content: content, text: widget.NewLabel("")}
	t.text.Wrapping = fyne.TextWrapWord
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameOverlayBackground))
	bg.StrokeColor, bg.StrokeWidth, bg.CornerRadius = theme.Color(theme.ColorNameShadow), 1, theme.InputRadiusSize()
	t.bubble = container.NewStack(bg, t.text)
	t.bubble.Hide()
	t.box = container.NewStack(content, container.NewWithoutLayout(t.bubble))
	t.ExtendBaseWidget(t)
	return t
}

// CreateRenderer draws the content and, above it, the tooltip.
func (t *TipLayer) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.box) }

// Resize lays the content out and makes the layer findable from its canvas.
func (t *TipLayer) Resize(s fyne.Size) {
	t.BaseWidget.Resize(s)
	if c := fyne.CurrentApp().Driver().CanvasForObject(t); c != nil {
		tipLayers.Store(c, t)
	}
}

// Tip is the text of the tooltip shown now, "" when none.
func (t *TipLayer) Tip() string {
	if t.owner == nil {
		return ""
	}
	return t.text.Text
}

// show shows text below owner (above it when there is no room below), within the layer.
func (t *TipLayer) show(owner fyne.CanvasObject, text string) {
	d := fyne.CurrentApp().Driver()
	at := d.AbsolutePositionForObject(owner).Subtract(d.AbsolutePositionForObject(t))
	t.owner = owner
	t.text.SetText(text)
	// As wide as the text on one line, within the layer; a wrapping label's MinSize is as narrow
	// as one character, so its height is asked at the width chosen.
	width := fyne.MeasureText(text, theme.TextSize(), fyne.TextStyle{}).Width + 2*theme.InnerPadding() + 1
	width = min(width, t.Size().Width-2*theme.Padding())
	t.text.Resize(fyne.NewSize(width, t.text.Size().Height))
	size := fyne.NewSize(width, t.text.MinSize().Height)
	pos := at.AddXY(0, owner.Size().Height)
	if over := pos.X + size.Width - (t.Size().Width - theme.Padding()); over > 0 {
		pos.X = max(0, pos.X-over)
	}
	if pos.Y+size.Height > t.Size().Height {
		pos.Y = max(0, at.Y-size.Height)
	}
	t.bubble.Move(pos)
	t.bubble.Resize(size)
	t.bubble.Show()
	t.bubble.Refresh()
}

// hide hides the tooltip if owner's shows.
func (t *TipLayer) hide(owner fyne.CanvasObject) {
	if t.owner != owner {
		return
	}
	t.owner = nil
	t.bubble.Hide()
}

// tipLayerOf returns the layer of o's canvas, nil when there is none.
func tipLayerOf(o fyne.CanvasObject) *TipLayer {
	c := fyne.CurrentApp().Driver().CanvasForObject(o)
	if c == nil {
		return nil
	}
	if t, ok := tipLayers.Load(c); ok {
		return t.(*TipLayer)
	}
	return nil
}

// TipLabel is a one-line label that cuts off with an ellipsis when its column is too narrow and
// then shows its whole text in a tooltip while the pointer rests on it: no text is ever cut off
// without a way to read it.
type TipLabel struct {
	widget.Label
	layer *TipLayer // where its tooltip shows now
}

// NewTipLabel returns a TipLabel showing text, escaped as SetText does.
func NewTipLabel(text string) *TipLabel {
	l := &TipLabel{}
	l.Text = termsafe.Escape(text)
	l.Truncation = fyne.TextTruncateEllipsis
	l.ExtendBaseWidget(l)
	return l
}

// Truncated reports whether the text does not fit the label's width (the ellipsis shows).
func (l *TipLabel) Truncated() bool {
	if l.Text == "" {
		return false
	}
	size := theme.TextSize()
	if l.SizeName != "" {
		size = theme.Size(l.SizeName)
	}
	need := fyne.MeasureText(l.Text, size, l.TextStyle).Width + 2*theme.InnerPadding()
	return need > l.Size().Width+0.5
}

// SetText sets the text, hiding a tooltip that showed the old one. Control characters are shown
// as escapes (termsafe.Escape): the table cells, the owner panel and the devices line show
// text from outside (a run's reason, values from the hub; docs/design.md#10-text-from-outside).
func (l *TipLabel) SetText(text string) {
	text = termsafe.Escape(text)
	if l.Text == text {
		return
	}
	l.MouseOut()
	l.Label.SetText(text)
}

// MouseIn shows the tooltip when the text is cut off.
func (l *TipLabel) MouseIn(*desktop.MouseEvent) {
	if l.Truncated() {
		if l.layer = tipLayerOf(l); l.layer != nil {
			l.layer.show(l, l.Text)
		}
	}
}

// MouseMoved does nothing: the tooltip stays while the pointer is on the label.
func (l *TipLabel) MouseMoved(*desktop.MouseEvent) {}

// MouseOut hides the tooltip.
func (l *TipLabel) MouseOut() {
	if l.layer != nil {
		l.layer.hide(l)
		l.layer = nil
	}
}
