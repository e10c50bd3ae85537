package ui

import (
	"fmt"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/journal"
)

// historyLimit is how many runs the history view loads per routine.
const historyLimit = 200

// HistoryView shows the runs of one routine (slot, start, late-by, duration, outcome) and the
// captured output of the selected run, where a page watch's diff appears.
type HistoryView struct {
	widget.BaseWidget
	actions  Actions
	pick     *widget.Select
	list     *widget.List
	output   *widget.Entry
	runs     []journal.Run
	selected int64 // run whose output is shown
	lastRun  int64 // newest run of the routine when its history was loaded
	box      *fyne.Container
	// background runs journal reads off the UI goroutine (tests run them inline).
	background func(func())
}

// NewHistoryView builds an empty view; Load fills it.
func NewHistoryView(a Actions) *HistoryView {
	h := &HistoryView{actions: a, background: func(f func()) { go f() }}
	h.pick = widget.NewSelect(nil, func(name string) { h.Load(name) })
	h.pick.PlaceHolder = "Choose a routine"
	h.list = widget.NewList(
		func() int { return len(h.runs) },
		func() fyne.CanvasObject { return widget.NewLabel("") },
		func(id widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(RunText(h.runs[id])) },
	)
	h.list.OnSelected = func(id widget.ListItemID) { h.showOutput(h.runs[id].ID) }
	h.output = widget.NewMultiLineEntry()
	h.output.TextStyle = fyne.TextStyle{Monospace: true}
	h.output.Wrapping = fyne.TextWrapOff
	h.output.SetPlaceHolder("Select a run to see its output")
	split := container.NewVSplit(h.list, h.output)
	h.box = container.NewBorder(h.pick, nil, nil, nil, split)
	h.ExtendBaseWidget(h)
	return h
}

// CreateRenderer draws the view.
func (h *HistoryView) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(h.box) }

// SetRoutines offers names in the routine picker; call it on the UI goroutine.
func (h *HistoryView) SetRoutines(names []string) {
	if slices.Equal(h.pick.Options, names) {
		return
	}
	h.pick.Options = names
	h.pick.Refresh()
}

// Follow reloads the shown history when the shown routine has run since it was loaded.
func (h *HistoryView) Follow(routines []scheduler.RoutineState) {
	for _, r := range routines {
		if r.Name == h.pick.Selected && r.Last != nil && r.Last.ID != h.lastRun {
			h.lastRun = r.Last.ID
			h.Load(r.Name)
		}
	}
}

// Load shows the history of routine, reading the journal off the UI goroutine.
func (h *HistoryView) Load(routine string) {
	if h.pick.Selected != routine {
		h.pick.Selected = routine // not SetSelected: that would call Load again
		h.pick.Refresh()
	}
	h.background(func() {
		runs, err := h.actions.History(routine, historyLimit)
		fyne.Do(func() {
			if h.pick.Selected != routine {
				return // another routine was chosen meanwhile and its read answers for it
			}
			if err != nil {
				h.output.SetText(fmt.Sprintf("Cannot read the history: %v", err))
				return
			}
			h.runs = runs
			h.list.Refresh()
			h.list.UnselectAll()
			for i, r := range runs { // keep the run being read selected across a reload
				if r.ID == h.selected {
					h.list.Select(i)
				}
			}
		})
	})
}

func (h *HistoryView) showOutput(runID int64) {
	h.selected = runID
	h.background(func() {
		out, err := h.actions.Output(runID)
		fyne.Do(func() {
			if h.selected != runID {
				return
			}
			switch {
			case err != nil:
				h.output.SetText(fmt.Sprintf("Cannot read the output: %v", err))
			case len(out) == 0:
				h.output.SetText("(no output)")
			default:
				h.output.SetText(string(out))
			}
		})
	})
}

// RunText is one history row: slot, start, late-by, duration, outcome.
func RunText(r journal.Run) string {
	start := "—"
	if r.Started != nil {
		start = r.Started.In(time.Local).Format("15:04:05")
	}
	s := fmt.Sprintf("%s  slot %s  started %s  late %s  took %s  %s",
		r.Slot.In(time.Local).Format("2006-01-02"), r.Slot.In(time.Local).Format("15:04:05"), start,
		Duration(r.LateBy), Duration(r.Duration), r.Outcome)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	if r.Trigger != "" && r.Trigger != journal.TriggerSchedule {
		s += " · " + r.Trigger
	}
	return s
}
