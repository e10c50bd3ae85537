package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/internal/termsafe"
	"github.com/routinely/routinely/ownership"
)

// Takeover policy choices as the settings show them.
var policyLabels = []string{"Ask me", "Always allow", "Always deny"}
var policyValues = []ownership.Policy{ownership.PolicyAsk, ownership.PolicyAllow, ownership.PolicyDeny}

// SettingsView holds Start at login, the takeover policy, the config file path with an Open
// button and the config's last validation errors.
type SettingsView struct {
	widget.BaseWidget
	actions   Actions
	onError   func(error)
	autostart *widget.Check
	policy    *widget.RadioGroup
	path      *widget.Label
	problems  *widget.Label
	box       *fyne.Container
	updating  bool // set while Update writes the widgets, so their callbacks do not fire actions
}

// NewSettingsView builds the view; onError (may be nil) shows a failed change.
func NewSettingsView(a Actions, onError func(error)) *SettingsView {
	v := &SettingsView{actions: a, onError: onError, path: widget.NewLabel(""), problems: widget.NewLabel("")}
	v.autostart = widget.NewCheck("Start Routinely at login", func(on bool) {
		if !v.updating {
			v.report(a.SetStartAtLogin(on))
		}
	})
	v.policy = widget.NewRadioGroup(policyLabels, func(label string) {
		if !v.updating && label != "" {
			v.report(a.SetPolicy(policyFromLabel(label)))
		}
	})
	v.policy.Required = true
	v.path.Wrapping = fyne.TextWrapBreak
	v.problems.Wrapping = fyne.TextWrapWord
	open := widget.NewButton("Open", func() { openConfig(a, v.onError) })
	v.box = container.NewVBox(
		v.autostart,
		widget.NewLabelWithStyle("When another Routinely asks to take over", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		v.policy,
		widget.NewLabelWithStyle("Routines file", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, nil, open, v.path),
		v.problems,
	)
	v.ExtendBaseWidget(v)
	return v
}

// CreateRenderer draws the view.
func (v *SettingsView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.box) }

// Update shows s; call it on the UI goroutine.
func (v *SettingsView) Update(s session.State) {
	v.updating = true
	defer func() { v.updating = false }()
	if v.autostart.Checked != s.AutoStart {
		v.autostart.SetChecked(s.AutoStart)
	}
	if label := policyLabel(s.Policy); v.policy.Selected != label {
		v.policy.SetSelected(label)
	}
	if v.path.Text != s.ConfigPath {
		v.path.SetText(s.ConfigPath)
	}
	if text := termsafe.Escape(ProblemsText(s)); v.problems.Text != text {
		// Monospace only for problems (file:line:col messages): a text style's fonts are parsed
		// on its first use, a few MB (docs/design.md §6.3), and most windows never show a problem.
		v.problems.TextStyle.Monospace = s.ConfigErr != "" || len(s.Problems) > 0
		v.problems.SetText(text)
	}
}

func (v *SettingsView) report(err error) {
	if err != nil && v.onError != nil {
		v.onError(err)
	}
}

// ProblemsText lists the config's last validation errors, or says it is fine.
func ProblemsText(s session.State) string {
	var lines []string
	if s.ConfigErr != "" {
		lines = append(lines, s.ConfigErr)
	}
	for _, p := range s.Problems {
		lines = append(lines, ProblemText(p))
	}
	if len(lines) == 0 {
		return "No problems found."
	}
	return fmt.Sprintf("%d problem(s):\n%s", len(lines), strings.Join(lines, "\n"))
}

func policyLabel(p ownership.Policy) string {
	for i, v := range policyValues {
		if v == p {
			return policyLabels[i]
		}
	}
	return policyLabels[0]
}

func policyFromLabel(label string) ownership.Policy {
	for i, l := range policyLabels {
		if l == label {
			return policyValues[i]
		}
	}
	return ownership.PolicyAsk
}

// openConfig runs a.OpenConfig off the UI goroutine and shows its error with onError (may be
// nil) on the UI goroutine.
func openConfig(a Actions, onError func(error)) {
	go func() {
		if err := a.OpenConfig(); err != nil && onError != nil {
			fyne.Do(func() { onError(err) })
		}
	}()
}
