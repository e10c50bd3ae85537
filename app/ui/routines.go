package ui

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/journal"
)

// Columns of the routines table. Each cell has two lines: the fact first, its detail below
// (the routine and its status; the schedule and its action; the next run and how soon; the last
// outcome and when, how late, why).
const (
	colName = iota
	colSchedule
	colNext
	colLast
	colActions
	numCols
)

var colTitles = [numCols]string{"Routine", "Schedule", "Next run", "Last run", ""}

// colShares divide the width left of the buttons between the text columns; colMin is the least
// each gets (below it the text cuts off, with a tooltip).
var (
	colShares = [colActions]float32{0.26, 0.25, 0.21, 0.28}
	colMin    = [colActions]float32{90, 90, 100, 110}
)

// RoutinesTable lists the routines with their status, schedule, next and last run, and a
// Run now and Pause/Resume button per row. It fits its width (down to about 700 px) without
// scrolling sideways: the text columns share what the buttons leave.
type RoutinesTable struct {
	widget.Table
	rows    []scheduler.RoutineState
	state   session.State
	shown   [][numCols]CellText // cell texts at the last refresh, to refresh only what changed
	actions Actions
	onError func(error)
	widths  [numCols]float32
	buttonW float32
}

// CellText is what one table cell shows: two lines with their colours.
type CellText struct {
	Top, Bottom       string
	TopImp, BottomImp widget.Importance
	Paused, Disabled  bool // the buttons' state (actions column)
}

// routineCell is one table cell; only the part its column needs is visible.
type routineCell struct {
	widget.BaseWidget
	box    *fyne.Container
	top    *TipLabel
	bottom *TipLabel
	lines  *fyne.Container
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
	probe := t.createCell().(*routineCell)
	probe.run.SetText("Run now")
	probe.pause.SetText("Resume") // the wider of Pause and Resume
	t.buttonW = probe.button.MinSize().Width
	t.fit(760)
	return t
}

// Resize lays the columns out for the new width, then resizes the table.
func (t *RoutinesTable) Resize(s fyne.Size) {
	t.fit(s.Width)
	t.Table.Resize(s)
}

// fit shares width between the columns: the buttons get what they need, the text columns the
// rest by colShares (at least colMin each).
func (t *RoutinesTable) fit(width float32) {
	gaps := float32(numCols-1) * theme.Padding() // the table's separators between columns
	rest := width - gaps - t.buttonW - theme.Padding()
	var w [numCols]float32
	for c := range colActions {
		w[c] = max(colMin[c], rest*colShares[c])
	}
	w[colActions] = t.buttonW + theme.Padding()
	if w == t.widths {
		return
	}
	t.widths = w
	for c, cw := range w {
		t.SetColumnWidth(c, cw)
	}
}

// Update shows s's routines; call it on the UI goroutine. Only cells whose text changed are
// refreshed: the state arrives every second and most cells stay the same.
func (t *RoutinesTable) Update(s session.State) {
	t.rows, t.state = s.Routines, s
	texts := make([][numCols]CellText, len(s.Routines))
	for i, r := range s.Routines {
		texts[i] = RoutineCells(r, s.Now, thisDevice(s))
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

// thisDevice is this device's name on the hub, "" without a hub.
func thisDevice(s session.State) string {
	if s.Hub == nil {
		return ""
	}
	return s.Hub.Device
}

// RoutineCells is what each column shows of r at now, on the device named here on the hub (""
// without a hub).
func RoutineCells(r scheduler.RoutineState, now time.Time, here string) [numCols]CellText {
	var c [numCols]CellText
	status, imp := StatusText(r, now)
	c[colName] = CellText{Top: r.Name, Bottom: status, BottomImp: imp}
	if r.Disabled != "" {
		c[colSchedule] = CellText{Top: "—", Bottom: "not scheduled", BottomImp: widget.LowImportance}
	} else {
		detail := r.Action
		if r.OwnZone && r.Timezone != "" {
			detail += " · " + r.Timezone
		}
		c[colSchedule] = CellText{Top: r.Schedule, Bottom: detail, BottomImp: widget.LowImportance}
	}
	c[colNext] = nextCell(r, now)
	c[colLast] = lastCell(r, now, here)
	c[colActions] = CellText{Paused: r.Paused, Disabled: r.Disabled != ""}
	return c
}

// nextCell is the next run, or the overdue mark when a past slot has not been handled.
func nextCell(r scheduler.RoutineState, now time.Time) CellText {
	if r.IsOverdue(now) {
		return CellText{Top: "overdue", TopImp: widget.DangerImportance,
			Bottom: "since " + Clock(*r.Overdue, now), BottomImp: widget.DangerImportance}
	}
	if r.Next == nil {
		detail := ""
		if r.Paused {
			detail = "paused"
		}
		return CellText{Top: "—", Bottom: detail, BottomImp: widget.LowImportance}
	}
	return CellText{Top: Clock(*r.Next, now), Bottom: Relative(*r.Next, now), BottomImp: widget.LowImportance}
}

// lastCell is the last run's outcome in colour with its duration, and below it when it
// started, how late, why (skipped, missed, failed), and, with a hub (here is this device's
// name), the device that ran it when that is another one.
func lastCell(r scheduler.RoutineState, now time.Time, here string) CellText {
	l := r.Last
	if l == nil {
		return CellText{Top: "never", TopImp: widget.LowImportance}
	}
	top := l.Outcome
	if l.Duration > 0 {
		top += " · " + Duration(l.Duration)
	}
	at := l.Slot
	if l.Started != nil {
		at = *l.Started
	}
	bottom := Clock(at, now)
	if l.LateBy >= time.Second {
		bottom += " · late " + Duration(l.LateBy)
	}
	if l.Trigger == journal.TriggerManual {
		bottom += " · run now"
	}
	if l.Reason != "" {
		bottom += " · " + l.Reason
	}
	// A slot this device skipped because another ran it already names that device in its reason
	// ("claimed by laptop", "overlap: running on laptop").
	if here != "" && l.Device != "" && l.Device != here && l.Outcome != journal.OutcomeSkipped {
		bottom += " · on " + l.Device
	}
	return CellText{Top: top, TopImp: OutcomeImportance(l.Outcome), Bottom: bottom, BottomImp: widget.LowImportance}
}

// OutcomeImportance is the colour of an outcome: green when it did its job, red when it
// failed, orange when it did not run, the accent colour while it runs.
func OutcomeImportance(outcome string) widget.Importance {
	switch {
	case failed(outcome):
		return widget.DangerImportance
	case outcome == journal.OutcomeRunning:
		return widget.HighImportance
	case outcome == journal.OutcomeSkipped || outcome == journal.OutcomeMissed:
		return widget.WarningImportance
	}
	return widget.SuccessImportance
}

func (t *RoutinesTable) createCell() fyne.CanvasObject {
	c := &routineCell{top: NewTipLabel(""), bottom: NewTipLabel("")}
	c.bottom.SizeName = theme.SizeNameCaptionText
	// The two lines closer than two labels would stand: one row reads as one item.
	c.lines = container.New(layout.NewCustomPaddedVBoxLayout(-theme.InnerPadding()), c.top, c.bottom)
	c.run = widget.NewButton("Run now", nil)
	c.pause = widget.NewButton("Pause", nil)
	c.button = container.NewCenter(container.NewHBox(c.run, c.pause))
	c.box = container.NewStack(c.lines, c.button)
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
	r := t.rows[id.Row]
	if id.Col == colActions {
		c.lines.Hide()
		t.bindButtons(c, r)
		c.button.Show()
		return
	}
	c.button.Hide()
	cell := RoutineCells(r, t.state.Now, thisDevice(t.state))[id.Col]
	setLine(c.top, cell.Top, cell.TopImp, id.Col == colName)
	setLine(c.bottom, cell.Bottom, cell.BottomImp, false)
	c.lines.Show()
}

// setLine shows text in l in the colour of imp, bold when asked.
func setLine(l *TipLabel, text string, imp widget.Importance, bold bool) {
	if l.Importance != imp || l.TextStyle.Bold != bold {
		l.Importance, l.TextStyle.Bold = imp, bold
		l.Refresh()
	}
	l.SetText(text)
}

func (t *RoutinesTable) bindButtons(c *routineCell, r scheduler.RoutineState) {
	name, paused, inFile := r.Name, r.Paused, r.PausedInFile
	c.run.OnTapped = func() { t.report(t.actions.RunNow(name)) }
	if paused {
		c.pause.SetText("Resume")
	} else {
		c.pause.SetText("Pause")
	}
	c.pause.OnTapped = func() {
		if paused && inFile {
			// A resume through the journal would not undo the file's pause: say where it is.
			t.report(fmt.Errorf("%s is paused in routines.toml (paused = true): remove that line, or set it to false, to resume it", name))
			return
		}
		t.report(t.actions.SetPaused(name, !paused))
	}
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
