package ui

import (
	"fmt"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/internal/termsafe"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/journal"
)

// historyLimit is how many runs the history view loads.
const historyLimit = 200

// AllRoutines is the history picker's choice of every routine's runs, the view it opens with.
const AllRoutines = "All routines"

// Columns of the history table.
const (
	hcolRoutine = iota
	hcolSlot
	hcolStarted
	hcolLate
	hcolTook
	hcolOutcome
	hcolTrigger
	hcolDevice // shown only with a hub: the device that ran the slot
	numHCols
)

var hcolTitles = [numHCols]string{"Routine", "Slot", "Started", "Late by", "Took", "Outcome", "Trigger", "Device"}

// hcolShares divide the table's width between its columns (each at least hcolMin): without a
// hub (no Device column) and with one.
var (
	hcolShares    = [numHCols]float32{0.16, 0.15, 0.14, 0.09, 0.11, 0.23, 0.12, 0}
	hcolHubShares = [numHCols]float32{0.15, 0.13, 0.13, 0.08, 0.09, 0.21, 0.10, 0.11}
	hcolMin       = [numHCols]float32{80, 80, 60, 56, 56, 90, 60, 60}
)

// HistoryView shows runs, newest first — every routine's by default, or one routine's — in a
// table (routine, slot, started, late by, duration, outcome in colour, trigger), and the
// captured output of the selected run, wrapped, where a page watch's diff appears.
type HistoryView struct {
	widget.BaseWidget
	actions  Actions
	pick     *widget.Select
	table    *widget.Table
	output   *widget.Entry
	routine  string // the routine shown, "" for all
	runs     []journal.Run
	selected int64 // run whose output is shown
	lastRun  int64 // newest run of the routines shown when the history was loaded
	loaded   bool
	devices  bool // the Device column is shown (a hub is configured)
	width    float32
	widths   [numHCols]float32
	box      *fyne.Container
	// background runs journal reads off the UI goroutine (tests run them inline).
	background func(func())
}

// NewHistoryView builds an empty view; Shown (its tab shown) or Load fills it.
func NewHistoryView(a Actions) *HistoryView {
	h := &HistoryView{actions: a, background: func(f func()) { go f() }}
	h.pick = widget.NewSelect([]string{AllRoutines}, func(choice string) {
		if choice == AllRoutines {
			choice = ""
		}
		h.Load(choice)
	})
	h.pick.Selected = AllRoutines
	h.table = widget.NewTableWithHeaders(
		func() (int, int) { return len(h.runs), h.columns() },
		func() fyne.CanvasObject { return NewTipLabel("") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row < len(h.runs) {
				text, imp := HistoryCell(h.runs[id.Row], id.Col, time.Now())
				setLine(o.(*TipLabel), text, imp, false)
			}
		},
	)
	h.table.ShowHeaderColumn = false
	h.table.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	h.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 {
			o.(*widget.Label).SetText(hcolTitles[id.Col])
		}
	}
	h.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(h.runs) {
			h.showOutput(h.runs[id.Row].ID)
		}
	}
	h.output = widget.NewMultiLineEntry() // monospace once it shows an output (setOutput)
	h.output.Wrapping = fyne.TextWrapWord // long lines wrap: no sideways scrolling to read them
	h.output.SetPlaceHolder("Select a run to see its output")
	split := container.NewVSplit(h.table, h.output)
	split.Offset = 0.6
	h.box = container.NewBorder(h.pick, nil, nil, nil, split)
	h.ExtendBaseWidget(h)
	h.fit(744)
	return h
}

// CreateRenderer draws the view.
func (h *HistoryView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(h.box) }

// Resize shares the new width between the table's columns, then lays the view out.
func (h *HistoryView) Resize(s fyne.Size) {
	h.fit(s.Width)
	h.BaseWidget.Resize(s)
}

// columns is how many columns the table shows: all but Device without a hub.
func (h *HistoryView) columns() int {
	if h.devices {
		return numHCols
	}
	return numHCols - 1
}

// ShowDevices shows the Device column when a hub is configured (on), and hides it otherwise;
// call it on the UI goroutine.
func (h *HistoryView) ShowDevices(on bool) {
	if on == h.devices {
		return
	}
	h.devices = on
	h.fit(h.width)
	h.table.Refresh()
}

// fit shares width between the shown columns by their shares, at least hcolMin each.
func (h *HistoryView) fit(width float32) {
	h.width = width
	shares := hcolShares
	if h.devices {
		shares = hcolHubShares
	}
	n := h.columns()
	rest := width - float32(n)*theme.Padding()
	var w [numHCols]float32
	for c := range n {
		w[c] = max(hcolMin[c], rest*shares[c])
	}
	if w == h.widths {
		return
	}
	h.widths = w
	for c, cw := range w {
		h.table.SetColumnWidth(c, cw)
	}
}

// SetRoutines offers names in the routine picker, after All routines; call it on the UI
// goroutine.
func (h *HistoryView) SetRoutines(names []string) {
	opts := append([]string{AllRoutines}, names...)
	if !slices.Equal(h.pick.Options, opts) {
		h.pick.Options = opts
		h.pick.Refresh()
	}
}

// Shown loads the runs the view shows (every routine's, until one is chosen) the first time
// its tab is shown: nothing is read from the journal for a view nobody has looked at.
func (h *HistoryView) Shown() {
	if !h.loaded {
		h.Load(h.routine)
	}
}

// Follow reloads the shown history when a routine it shows has run since it was loaded (once it
// has been shown).
func (h *HistoryView) Follow(routines []scheduler.RoutineState) {
	if !h.loaded {
		return
	}
	var newest int64
	for _, r := range routines {
		if r.Last != nil && (h.routine == "" || r.Name == h.routine) {
			newest = max(newest, r.Last.ID)
		}
	}
	if newest != 0 && newest != h.lastRun {
		h.lastRun = newest
		h.Load(h.routine)
	}
}

// Load shows the runs of routine ("" for every routine), reading the journal off the UI
// goroutine.
func (h *HistoryView) Load(routine string) {
	h.routine, h.loaded = routine, true
	choice := routine
	if choice == "" {
		choice = AllRoutines
	}
	if h.pick.Selected != choice {
		h.pick.Selected = choice // not SetSelected: that would call Load again
		h.pick.Refresh()
	}
	h.background(func() {
		runs, err := h.actions.History(routine, historyLimit)
		fyne.Do(func() {
			if h.routine != routine {
				return // another routine was chosen meanwhile and its read answers for it
			}
			if err != nil {
				h.setOutput(fmt.Sprintf("Cannot read the history: %v", err), false)
				return
			}
			h.runs = runs
			h.table.UnselectAll()
			h.table.Refresh()
			for i, r := range runs { // keep the run being read selected across a reload
				if r.ID == h.selected {
					h.table.Select(widget.TableCellID{Row: i, Col: hcolOutcome})
				}
			}
		})
	})
}

func (h *HistoryView) showOutput(runID int64) {
	if h.selected == runID && h.output.Text != "" {
		return
	}
	h.selected = runID
	h.background(func() {
		out, err := h.actions.Output(runID)
		fyne.Do(func() {
			if h.selected != runID {
				return
			}
			switch {
			case err != nil:
				h.setOutput(fmt.Sprintf("Cannot read the output: %v", err), false)
			case len(out) == 0:
				h.setOutput("(no output)", false)
			default:
				h.setOutput(string(out), true)
			}
		})
	})
}

// setOutput shows text in the output pane, in monospace only when it is a run's output (code):
// the monospace fonts are parsed on their first use, a few MB (docs/design.md §6.3). Control
// characters are shown as escapes (termsafe.Escape), as `history --output` prints them.
func (h *HistoryView) setOutput(text string, code bool) {
	restyle := h.output.TextStyle.Monospace != code
	h.output.TextStyle.Monospace = code
	h.output.SetText(termsafe.Escape(text))
	if restyle {
		h.output.Refresh()
	}
}

// HistoryCell is what column col of the history table shows of r, seen at now, and its colour
// (the outcome's; the rest plain).
func HistoryCell(r journal.Run, col int, now time.Time) (string, widget.Importance) {
	switch col {
	case hcolRoutine:
		return r.Routine, widget.MediumImportance
	case hcolSlot:
		if r.Trigger == journal.TriggerManual {
			return "run now", widget.LowImportance
		}
		return ShortClock(r.Slot, now), widget.MediumImportance
	case hcolStarted:
		if r.Started == nil {
			return "—", widget.LowImportance
		}
		return ShortClock(*r.Started, now), widget.MediumImportance
	case hcolLate:
		if r.Started == nil || r.Trigger == journal.TriggerManual {
			return "—", widget.LowImportance
		}
		return Duration(r.LateBy), widget.MediumImportance
	case hcolTook:
		if r.Duration == 0 {
			return "—", widget.LowImportance
		}
		return Duration(r.Duration), widget.MediumImportance
	case hcolOutcome:
		s := r.Outcome
		if r.Attempts > 1 {
			s += fmt.Sprintf(" (%d attempts)", r.Attempts)
		}
		if r.Reason != "" {
			s += ": " + r.Reason
		}
		return s, OutcomeImportance(r.Outcome)
	case hcolTrigger:
		return r.Trigger, widget.LowImportance
	case hcolDevice:
		if r.Device == "" {
			return "—", widget.LowImportance
		}
		return r.Device, widget.MediumImportance
	}
	return "", widget.MediumImportance
}

// ShortClock prints t for a narrow column, relative to now's day: "15:04:05" today, "Mon 15:04"
// within a week, "2 Jan 15:04" this year, else "2006-01-02".
func ShortClock(t, now time.Time) string {
	t, now = t.In(time.Local), now.In(time.Local)
	switch {
	case t.Year() == now.Year() && t.YearDay() == now.YearDay():
		return t.Format("15:04:05")
	case t.Sub(now).Abs() < 6*24*time.Hour:
		return t.Format("Mon 15:04")
	case t.Year() == now.Year():
		return t.Format("2 Jan 15:04")
	}
	return t.Format("2006-01-02")
}
