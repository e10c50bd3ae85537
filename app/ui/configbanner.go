package ui

import (
	"fmt"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
)

// ConfigBanner heads the routines tab while routines.toml cannot be used: where its error is,
// and that the last good version runs meanwhile (or that nothing runs, without one).
type ConfigBanner struct {
	widget.BaseWidget
	head   *widget.Label
	detail *TipLabel
	box    *fyne.Container
}

// NewConfigBanner builds a hidden banner.
func NewConfigBanner() *ConfigBanner {
	b := &ConfigBanner{head: widget.NewLabel(""), detail: NewTipLabel("")}
	b.head.Importance = widget.WarningImportance
	b.head.TextStyle.Bold = true
	b.head.Wrapping = fyne.TextWrapWord
	b.detail.Importance = widget.LowImportance
	b.box = container.NewVBox(b.head, b.detail)
	b.ExtendBaseWidget(b)
	b.Hide()
	return b
}

// CreateRenderer draws the banner.
func (b *ConfigBanner) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(b.box) }

// Update shows the banner for s, or hides it; call it on the UI goroutine.
func (b *ConfigBanner) Update(s session.State) {
	head := ConfigBannerText(s)
	if head == "" {
		if b.Visible() {
			b.Hide()
		}
		return
	}
	if b.head.Text != head {
		b.head.SetText(head)
	}
	b.detail.SetText(s.ConfigErr)
	if !b.Visible() {
		b.Show()
	}
}

// ConfigBannerText is the banner's sentence: "routines.toml has an error at LINE:COL — running
// the last good version" (or "— no routine runs until it is fixed" without one); "" when the
// file loads.
func ConfigBannerText(s session.State) string {
	p := s.ConfigProblem
	if p == nil {
		return ""
	}
	name := filepath.Base(p.File)
	if name == "." || name == "" {
		name = "routines.toml"
	}
	where := "has an error"
	if p.Line > 0 {
		where = fmt.Sprintf("has an error at %d:%d", p.Line, p.Col)
	}
	if s.LastGood {
		return fmt.Sprintf("%s %s — running the last good version", name, where)
	}
	return fmt.Sprintf("%s %s — no routine runs until it is fixed", name, where)
}
