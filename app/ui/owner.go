package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/internal/skew"
	"github.com/routinely/routinely/internal/termsafe"
)

// OwnerPanel shows who owns the routines and how healthy that owner looks, with a Take back
// button while another process owns.
type OwnerPanel struct {
	widget.BaseWidget
	values   map[string]*TipLabel // cut off with a tooltip rather than widen the window
	notice   *widget.Label
	devices  *TipLabel // the devices on the hub; hidden without a hub
	takeBack *widget.Button
	box      *fyne.Container
}

var ownerFields = []string{"Owner", "PID", "Host", "Role", "Since", "Epoch", "Heartbeat", "Last run", "Last tick"}

// NewOwnerPanel builds the panel; takeBack is called by its Take back button.
func NewOwnerPanel(takeBack func()) *OwnerPanel {
	p := &OwnerPanel{values: map[string]*TipLabel{}, notice: widget.NewLabel(""), devices: NewTipLabel("")}
	// Two label/value columns keep the panel short, leaving the window to the routines.
	left, right := container.New(layout.NewFormLayout()), container.New(layout.NewFormLayout())
	for i, f := range ownerFields {
		v := NewTipLabel("—")
		p.values[f] = v
		col := left
		if i >= len(ownerFields)/2 {
			col = right
		}
		col.Add(widget.NewLabelWithStyle(f, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}))
		col.Add(v)
	}
	form := container.NewGridWithColumns(2, left, right)
	p.notice.Wrapping = fyne.TextWrapWord
	p.notice.Hide()
	p.devices.Hide()
	p.takeBack = widget.NewButton("Take back", takeBack)
	p.takeBack.Hide()
	p.box = container.NewVBox(form, p.devices, p.notice, container.NewHBox(p.takeBack))
	p.ExtendBaseWidget(p)
	return p
}

// CreateRenderer draws the panel.
func (p *OwnerPanel) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(p.box) }

// Update shows s; call it on the UI goroutine.
func (p *OwnerPanel) Update(s session.State) {
	rec := ownerRecord(s)
	set := func(f, v string) {
		if p.values[f].Text != v {
			p.values[f].SetText(v)
		}
	}
	set("Owner", Who(s))
	if rec == nil || (s.Mode != session.ModeOwning && !s.Owner.Held) {
		for _, f := range ownerFields[1:] {
			set(f, "—")
		}
	} else {
		set("PID", strconv.Itoa(rec.PID))
		set("Host", rec.Host)
		set("Role", string(rec.Role))
		set("Since", Clock(rec.AcquiredAt, s.Now))
		set("Epoch", strconv.FormatUint(rec.Epoch, 10))
		set("Heartbeat", heartbeatText(s))
		set("Last run", lastRunText(s))
		set("Last tick", tickText(s))
	}
	if text := DevicesText(s); text == "" {
		p.devices.Hide()
	} else {
		if p.devices.Text != text {
			p.devices.SetText(text)
		}
		p.devices.Show()
	}
	if notice := termsafe.Escape(s.Notice); p.notice.Text != notice {
		p.notice.SetText(notice) // only on change: the state arrives every second
	}
	if s.Notice != "" {
		p.notice.Show()
	} else {
		p.notice.Hide()
	}
	// A stuck owner cannot answer a takeover request: the banner offers to end it instead.
	if s.Mode == session.ModeStandby && s.Owner.Held && s.Stuck == nil {
		p.takeBack.Show()
	} else {
		p.takeBack.Hide()
	}
}

// heartbeatText is "on time (every 2s)" while the owner's last heartbeat is at most two
// intervals old, and its age once it is later than that ("12s ago"): only a late heartbeat is
// news, and a label that counts the seconds of a healthy one redraws the window every second.
func heartbeatText(s session.State) string {
	rec := ownerRecord(s)
	if rec == nil || rec.HeartbeatAt.IsZero() {
		return "—"
	}
	age := skew.Age(rec.HeartbeatAt, s.Now)
	if every := time.Duration(rec.HeartbeatIntervalMS) * time.Millisecond; every > 0 && age <= 2*every {
		return "on time (every " + Duration(every) + ")"
	}
	return Duration(age.Truncate(time.Second)) + " ago"
}

// lastRunText is the last run the owner really started (never a slot it recorded skipped or
// missed): the routine, when, and whether it is still running.
func lastRunText(s session.State) string {
	rec := ownerRecord(s)
	if rec == nil || rec.LastJob == nil {
		return "none yet"
	}
	j := rec.LastJob
	state := "running"
	if j.Finished != nil {
		state = "done"
	}
	return fmt.Sprintf("%s, %s (%s) · %s", j.Routine, Clock(j.Started, s.Now), Relative(Past(j.Started, s.Now), s.Now), state)
}

// tickText is when the scheduler last handled a slot (ran it, or recorded it skipped or
// missed): the progress that tells a busy owner from a wedged one.
func tickText(s session.State) string {
	rec := ownerRecord(s)
	if rec == nil || rec.LastTickAt.IsZero() {
		return "none yet"
	}
	return Clock(rec.LastTickAt, s.Now) + " (" + Relative(Past(rec.LastTickAt, s.Now), s.Now) + ")"
}

// DevicesText is the owner panel's line about the devices on the hub, "" without a hub: the
// devices connected now (this one marked), then each device whose liveness has lapsed, with
// how long ago it was last seen. For example "Devices: desktop, laptop (this one) · studio last
// seen 4m ago".
func DevicesText(s session.State) string {
	if s.Hub == nil {
		return ""
	}
	var up, gone []string
	for _, d := range s.Hub.Devices {
		name := d.Name
		if d.Self {
			name += " (this one)"
		}
		switch {
		case d.Alive:
			up = append(up, name)
		case d.LastSeen.IsZero():
			gone = append(gone, name+" not connected")
		default:
			gone = append(gone, name+" last seen "+Countdown(Past(d.LastSeen, s.Now), s.Now))
		}
	}
	text := "Devices: "
	if len(up) == 0 {
		text += "none connected"
	} else {
		text += strings.Join(up, ", ")
	}
	for _, g := range gone {
		text += " · " + g
	}
	return text
}
