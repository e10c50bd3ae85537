package ui

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/journal"
)

// Columns of the routines table.
const (
	colName = iota
	colSchedule
	colNext
	colLast
	colStatus
	colActions
	numCols
)

var colTitles = [numCols]string{"Routine", "Schedule", "Next run", "Last run", "Status", ""}
var colWidths = [numCols]float32{150, 150, 170, 210, 70, 190}

// RoutinesTable lists the routines with their schedule, next and last run and status, and a
// Run now and Pause/Resume button per row.
type RoutinesTable struct {
	widget.Table
	rows    []scheduler.RoutineState
	state   session.State
	shown   [][numCols]string // cell texts at the last refresh, to refresh only what changed
	actions Actions
	onError func(error)
}

// routineCell is one table cell; only the part its column needs is visible.
type routineCell struct {
	widget.BaseWidget
	box    *fyne.Container
	text   *widget.Label
	icon   *widget.Icon
	last   *widget.Label
	lastC  *fyne.Container
	run    *widget.Button
	pause  *widget.Button
	button *fyne.Container
}

// NewRoutinesTable builds an empty table; onError shows a failed action (may be nil).
func NewRoutinesTable(a Actions, onError func(error)) *RoutinesTable {
	t := &RoutinesTable{actions: a, onError: onError}
	t.ShowHeaderRow = true
	t.Length = func() (int, int) { return len(t.rows), numCols }
	t.CreateCell = t.createCell
	t.UpdateCell = t.updateCell
	t.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	t.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) { o.(*widget.Label).SetText(colTitles[id.Col]) }
	t.ExtendBaseWidget(t)
	for c, w := range colWidths {
		t.SetColumnWidth(c, w)
	}
	return t
}

// Update shows s's routines; call it on the UI goroutine. Only cells whose text changed are
// refreshed: the state arrives every second and most cells stay the same.
func (t *RoutinesTable) Update(s session.State) {
	t.rows, t.state = s.Routines, s
	texts := make([][numCols]string, len(s.Routines))
	for i, r := range s.Routines {
		for c := range numCols {
			texts[i][c] = cellText(r, c, s.Now)
		}
	}
	if len(texts) != len(t.shown) {
		t.shown = texts
		t.Refresh()
		return
	}
	for i := range texts {
		for c := range numCols {
			if texts[i][c] != t.shown[i][c] {
				t.RefreshItem(widget.TableCellID{Row: i, Col: c})
			}
		}
	}
	t.shown = texts
}

// cellText is what column col shows of r (for the actions column, the buttons' state).
func cellText(r scheduler.RoutineState, col int, now time.Time) string {
	switch col {
	case colName:
		return r.Name
	case colSchedule:
		return r.Schedule
	case colNext:
		return NextText(r, now)
	case colLast:
		return LastText(r, now) + "|" + lastOutcome(r)
	case colStatus:
		return RoutineStatus(r, now)
	}
	return fmt.Sprintf("%t|%t", r.Paused, r.Disabled != "")
}

func (t *RoutinesTable) createCell() fyne.CanvasObject {
	c := &routineCell{text: widget.NewLabel(""), icon: widget.NewIcon(nil), last: widget.NewLabel("")}
	c.text.Truncation = fyne.TextTruncateEllipsis
	c.lastC = container.NewHBox(c.icon, c.last)
	c.run = widget.NewButtonWithIcon("Run now", theme.MediaPlayIcon(), nil)
	c.pause = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), nil)
	c.button = container.NewHBox(c.run, c.pause)
	c.box = container.NewStack(c.text, c.lastC, c.button)
	c.ExtendBaseWidget(c)
	return c
}

// CreateRenderer draws the cell's stack.
func (c *routineCell) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(c.box) }

func (t *RoutinesTable) updateCell(id widget.TableCellID, o fyne.CanvasObject) {
	c := o.(*routineCell)
	if id.Row >= len(t.rows) {
		return
	}
	r, now := t.rows[id.Row], t.state.Now
	c.text.Hide()
	c.lastC.Hide()
	c.button.Hide()
	switch id.Col {
	case colName, colSchedule, colNext, colStatus:
		c.text.SetText(cellText(r, id.Col, now))
		c.text.Show()
	case colLast:
		c.icon.SetResource(OutcomeIcon(r.Last))
		c.last.SetText(LastText(r, now))
		c.lastC.Show()
	case colActions:
		t.bindButtons(c, r)
		c.button.Show()
	}
}

func (t *RoutinesTable) bindButtons(c *routineCell, r scheduler.RoutineState) {
	name, paused := r.Name, r.Paused
	c.run.OnTapped = func() { t.report(t.actions.RunNow(name)) }
	if paused {
		c.pause.SetText("Resume")
		c.pause.SetIcon(theme.MediaPlayIcon())
	} else {
		c.pause.SetText("Pause")
		c.pause.SetIcon(theme.MediaPauseIcon())
	}
	c.pause.OnTapped = func() { t.report(t.actions.SetPaused(name, !paused)) }
	if r.Disabled != "" {
		c.run.Disable()
		c.pause.Disable()
	} else {
		c.run.Enable()
		c.pause.Enable()
	}
}

func (t *RoutinesTable) report(err error) {
	if err != nil && t.onError != nil {
		t.onError(err)
	}
}

// OutcomeIcon is the icon beside a last run: none before the first run.
func OutcomeIcon(r *journal.Run) fyne.Resource {
	if r == nil {
		return nil
	}
	switch {
	case failed(r.Outcome):
		return theme.ErrorIcon()
	case r.Outcome == journal.OutcomeRunning:
		return theme.MediaPlayIcon()
	case r.Outcome == journal.OutcomeSkipped || r.Outcome == journal.OutcomeMissed:
		return theme.WarningIcon()
	}
	return theme.ConfirmIcon()
}

func lastOutcome(r scheduler.RoutineState) string {
	if r.Last == nil {
		return ""
	}
	return r.Last.Outcome
}
