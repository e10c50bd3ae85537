package ui

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// buttons returns the rendered buttons labelled text, in layout order.
func buttons(o fyne.CanvasObject, text string) []*widget.Button {
	var out []*widget.Button
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if !o.Visible() {
			return
		}
		if b, ok := o.(*widget.Button); ok && b.Text == text {
			out = append(out, b)
		}
		switch x := o.(type) {
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return out
}

// dashboardRoutines are the fixture routines plus one of each case the table must explain:
// overdue, paused in routines.toml, skipped with a reason, invalid, and a name too long for its
// column.
func dashboardRoutines() []scheduler.RoutineState {
	rs := fixtureRoutines()
	return append(rs,
		scheduler.RoutineState{Name: "backup", Schedule: "at 08:30 Mon–Wed,Fri,Sun", Action: "shell", Timezone: "Europe/Paris", OwnZone: true,
			Next: at(10, 0, 0), Overdue: at(9, 0, 0),
			Last: &journal.Run{ID: 9, Routine: "backup", Slot: *at(8, 30, 0), Started: at(8, 30, 4),
				Outcome: journal.OutcomeSuccess, Duration: 95 * time.Second, LateBy: 4 * time.Second}},
		scheduler.RoutineState{Name: "inbox-zero", Schedule: "every 15m", Action: "notify", Timezone: "Etc/UTC", Paused: true, PausedInFile: true,
			PauseNote: "paused = true in routines.toml"},
		scheduler.RoutineState{Name: "sync-photos", Schedule: "every 5m", Action: "run", Next: at(9, 35, 0),
			Last: &journal.Run{ID: 10, Routine: "sync-photos", Slot: *at(9, 25, 0), Outcome: journal.OutcomeSkipped, Reason: "overlap"}},
		scheduler.RoutineState{Name: "nightly-report", Disabled: "routines.toml:31:1: routine \"nightly-report\" has no schedule (at, every or cron)"},
		scheduler.RoutineState{Name: "a-routine-with-a-rather-long-name", Schedule: "every 1h", Action: "run", Next: at(10, 0, 0)},
	)
}

// The table fits a 760 px wide window, explains every state in its cells (the reason for
// paused, invalid and skipped; the overdue mark; the last outcome in colour with its duration
// and lateness), and its buttons reach the actions.
func TestRoutinesTableMarkupAndButtons(t *testing.T) {
	test.NewTempApp(t)
	rec := &recorder{}
	var shown []error
	tbl := NewRoutinesTable(rec, func(err error) { shown = append(shown, err) })
	s := standbyState()
	s.Routines = dashboardRoutines()
	tbl.Update(s)
	assertMarkup(t, "routines_table.xml", tbl, fyne.NewSize(744, 480))
	var total float32
	for _, w := range tbl.widths {
		total += w
	}
	if total += float32(numCols-1) * theme.Padding(); total > 744 {
		t.Errorf("columns take %.0f px, more than the 744 px a 760 px window leaves the table", total)
	}

	cells := func(name string) [numCols]CellText {
		for _, r := range s.Routines {
			if r.Name == name {
				return RoutineCells(r, s.Now, thisDevice(s))
			}
		}
		t.Fatalf("no routine %s", name)
		return [numCols]CellText{}
	}
	for _, c := range []struct {
		routine string
		col     int
		top     string
		bottom  string
		imp     widget.Importance
	}{
		{"morning-briefing", colLast, "success · 2s", "08:00:01 · late 1s", widget.SuccessImportance},
		{"page-watch", colLast, "failed · 1s", "09:00:00", widget.DangerImportance},
		{"backup", colNext, "overdue", "since 09:00:00", widget.DangerImportance},
		{"backup", colLast, "success · 1m 35s", "08:30:04 · late 4s", widget.SuccessImportance},
		{"backup", colSchedule, "at 08:30 Mon–Wed,Fri,Sun", "shell · Europe/Paris", 0},
		{"sync-photos", colLast, "skipped", "09:25:00 · overlap", widget.WarningImportance},
		{"morning-briefing", colNext, "Tue 08:00", "in 22h 30m", 0},
	} {
		got := cells(c.routine)[c.col]
		if got.Top != c.top || got.Bottom != c.bottom || got.TopImp != c.imp {
			t.Errorf("%s column %d: %q / %q (importance %v), want %q / %q (%v)", c.routine, c.col, got.Top, got.Bottom, got.TopImp, c.top, c.bottom, c.imp)
		}
	}
	for name, want := range map[string]string{
		"heartbeat":      "paused",
		"inbox-zero":     "paused in routines.toml",
		"nightly-report": "invalid: routines.toml:31:1: routine \"nightly-report\" has no schedule (at, every or cron)",
		"backup":         "overdue",
		"page-watch":     "failing",
	} {
		if got := cells(name)[colName].Bottom; got != want {
			t.Errorf("%s status %q, want %q", name, got, want)
		}
	}

	runs := buttons(tbl, "Run now")
	if len(runs) != len(s.Routines) {
		t.Fatalf("%d Run now buttons, want one per routine", len(runs))
	}
	test.Tap(runs[1])
	resume := buttons(tbl, "Resume")
	if len(resume) != 2 {
		t.Fatalf("%d Resume buttons, want 2 (heartbeat, inbox-zero)", len(resume))
	}
	test.Tap(resume[0])
	test.Tap(resume[1]) // inbox-zero: paused in the file, which a resume cannot undo
	test.Tap(buttons(tbl, "Pause")[0])
	want := []string{"run page-watch", "resume heartbeat", "pause morning-briefing"}
	if got := rec.Calls(); !slices.Equal(got, want) {
		t.Errorf("actions = %q, want %q", got, want)
	}
	if len(shown) != 1 || !strings.Contains(shown[0].Error(), "inbox-zero is paused in routines.toml") {
		t.Errorf("Resume of a routine paused in the file showed %v, want it to say the file pauses it", shown)
	}
}

// A text cut off by its column shows whole in a tooltip while the pointer is on it, and the
// tooltip goes when the pointer leaves.
func TestRoutinesTableTooltipShowsCutOffText(t *testing.T) {
	a := test.NewTempApp(t)
	tbl := NewRoutinesTable(&recorder{}, nil)
	s := standbyState()
	s.Routines = dashboardRoutines()
	tbl.Update(s)
	w := a.NewWindow("Routinely")
	layer := NewTipLayer(tbl)
	w.SetContent(layer)
	w.Resize(fyne.NewSize(760, 600))
	var cut *TipLabel
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if l, ok := o.(*TipLabel); ok && o.Visible() && l.Text == "a-routine-with-a-rather-long-name" {
			cut = l
		}
		switch x := o.(type) {
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(w.Content())
	if cut == nil {
		t.Fatal("the long routine name is not shown")
	}
	if !cut.Truncated() {
		t.Fatalf("the long name fits its %.0f px column: the test needs a cut-off text", cut.Size().Width)
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(cut).AddXY(5, 5)
	test.MoveMouse(w.Canvas(), pos)
	if got := layer.Tip(); got != "a-routine-with-a-rather-long-name" || !layer.bubble.Visible() {
		t.Errorf("tooltip %q (shown %t) on the cut-off name, want the whole name", got, layer.bubble.Visible())
	}
	if w.Canvas().Overlays().Top() != nil {
		t.Error("the tooltip is an overlay: it would take the next click")
	}
	if b := layer.bubble.Size(); b.Height > 2*cut.MinSize().Height || b.Width < cut.Size().Width {
		t.Errorf("tooltip %v for a %v label: want it one line, wider than the label", b, cut.Size())
	}
	test.MoveMouse(w.Canvas(), pos.AddXY(0, 200))
	if got := layer.Tip(); got != "" || layer.bubble.Visible() {
		t.Errorf("tooltip %q still shown after the pointer left", got)
	}
	// A label that fits shows no tooltip.
	var fits *TipLabel
	walk = func(o fyne.CanvasObject) {
		if l, ok := o.(*TipLabel); ok && o.Visible() && l.Text == "heartbeat" {
			fits = l
		}
		switch x := o.(type) {
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(w.Content())
	test.MoveMouse(w.Canvas(), fyne.CurrentApp().Driver().AbsolutePositionForObject(fits).AddXY(5, 5))
	if got := layer.Tip(); got != "" {
		t.Errorf("tooltip %q on a label that fits", got)
	}
}

func TestRoutineStatus(t *testing.T) {
	rs := fixtureRoutines()
	late := scheduler.RoutineState{Name: "late", Next: at(9, 45, 0), Overdue: at(9, 29, 0)}
	running := scheduler.RoutineState{Name: "r", Running: true, Next: at(9, 0, 0)}
	invalid := scheduler.RoutineState{Name: "bad", Disabled: "routines.toml:3:1: no schedule"}
	for _, c := range []struct {
		r    scheduler.RoutineState
		want string
	}{{rs[0], StatusIdle}, {rs[1], StatusFailing}, {rs[2], StatusPaused}, {late, StatusLate}, {running, StatusRunning}, {invalid, StatusInvalid}} {
		if got := RoutineStatus(c.r, fixtureNow); got != c.want {
			t.Errorf("%s: status %q, want %q", c.r.Name, got, c.want)
		}
	}
}

func TestOwnerPanelStandbyMarkup(t *testing.T) {
	test.NewTempApp(t)
	rec := &recorder{}
	p := NewOwnerPanel(rec.TakeBack)
	p.Update(standbyState())
	assertMarkup(t, "owner_panel_standby.xml", p, fyne.NewSize(760, 220))
	// The last run is the last one that really started, apart from the tick (which counts slots
	// recorded skipped too).
	if got := p.values["Last run"].Text; got != "heartbeat, 09:29:30 (< 1m ago) · done" {
		t.Errorf("last run = %q, want the job, when, and done", got)
	}
	if got := p.values["Last tick"].Text; got != "09:29:50 (< 1m ago)" {
		t.Errorf("last tick = %q, want the tick time", got)
	}
	test.Tap(p.takeBack)
	if got := rec.Calls(); !slices.Equal(got, []string{"take back"}) {
		t.Errorf("Take back sent %q", got)
	}
}

func TestOwnerPanelOwning(t *testing.T) {
	test.NewTempApp(t)
	s := standbyState()
	s.Mode = session.ModeOwning
	self := *daemonRecord()
	self.Role, self.PID, self.Epoch = ownership.RoleDesktop, 777, 13
	s.Self = &self
	p := NewOwnerPanel(func() {})
	p.Update(s)
	if p.values["Owner"].Text != "this app" || p.values["PID"].Text != "777" || p.values["Epoch"].Text != "13" {
		t.Errorf("owning panel shows owner %q pid %q epoch %q", p.values["Owner"].Text, p.values["PID"].Text, p.values["Epoch"].Text)
	}
	if p.takeBack.Visible() {
		t.Error("Take back offered while this app owns")
	}
}

// The banner for an owner that stopped heartbeating is one sentence (what, since when, what the
// button does) with no command line, counts down while the silence has not held long enough,
// then offers "End the stuck owner (pid N)", which asks for confirmation before it acts.
func TestWedgeBannerMarkup(t *testing.T) {
	a := test.NewTempApp(t)
	rec := &recorder{}
	b := NewWedgeBanner(rec, nil)
	win := a.NewWindow("Routinely")
	win.SetContent(b)
	win.Resize(fyne.NewSize(760, 400))
	b.Parent = win
	s := standbyState()
	b.Update(s)
	if b.Visible() {
		t.Fatal("banner shown for a healthy owner")
	}
	s.Owner.Diagnoses = []ownership.Diagnosis{{Kind: ownership.DiagNotHeartbeating,
		Message: "the owner (pid 4242) is running but has not written a heartbeat for 41s (suspended or wedged); `routinely daemon --takeover --kill-wedged` can end it",
		Since:   *at(9, 29, 19)}}
	s.Stuck = &session.StuckOwner{PID: 4242, Role: ownership.RoleDaemon, Since: *at(9, 29, 19), EndableIn: 12 * time.Second}
	b.Update(s)
	if !b.Visible() || b.end.Visible() {
		t.Fatalf("while counting down: banner shown %t, button shown %t; want the banner without the button", b.Visible(), b.end.Visible())
	}
	want := "The daemon that owns your routines (pid 4242) has not responded since 09:29:19, so no routine runs; if it stays silent, you can end it from here in 12s."
	if got := BannerText(s); got != want {
		t.Errorf("counting down:\n got %q\nwant %q", got, want)
	}
	s.Stuck.EndableIn = 0
	b.Update(s)
	text := BannerText(s)
	if strings.Count(text, ".") != 1 || strings.Contains(text, "routinely ") || strings.Contains(text, "`") {
		t.Errorf("banner %q: want one sentence and no command line", text)
	}
	if !b.end.Visible() || b.end.Text != "End the stuck owner (pid 4242)" {
		t.Fatalf("button %q shown %t, want End the stuck owner (pid 4242)", b.end.Text, b.end.Visible())
	}
	assertMarkup(t, "wedge_banner.xml", NewWedgeBannerFor(s), fyne.NewSize(760, 90))

	test.Tap(b.end)
	if calls := rec.Calls(); len(calls) != 0 {
		t.Fatalf("the button acted before the confirmation: %q", calls)
	}
	overlay := win.Canvas().Overlays().Top()
	if overlay == nil {
		t.Fatal("no confirmation dialog")
	}
	if !strings.Contains(richText(overlay), "force it to") {
		t.Errorf("the confirmation does not say what it will do: %q", richText(overlay))
	}
	confirm := buttons(overlay, EndStuckConfirm)
	if len(confirm) != 1 {
		t.Fatalf("%d %q buttons in the dialog", len(confirm), EndStuckConfirm)
	}
	test.Tap(confirm[0])
	if got := rec.Calls(); !slices.Equal(got, []string{"end stuck 4242"}) {
		t.Errorf("confirming sent %q, want end stuck 4242", got)
	}

	s.Owner.Diagnoses, s.Stuck = nil, nil
	b.Update(s)
	if b.Visible() {
		t.Error("banner stayed after the diagnosis cleared")
	}
}

// NewWedgeBannerFor is a banner showing s, for markup tests.
func NewWedgeBannerFor(s session.State) *WedgeBanner {
	b := NewWedgeBanner(&recorder{}, nil)
	b.Update(s)
	return b
}

// richText is every label and rich text shown in o, joined.
func richText(o fyne.CanvasObject) string {
	var parts []string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			parts = append(parts, x.Text)
		case *widget.RichText:
			parts = append(parts, x.String())
		}
		switch x := o.(type) {
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return strings.Join(parts, " ")
}

func TestTrayMenuInPlace(t *testing.T) {
	test.NewTempApp(t)
	rec := &recorder{}
	host := &trayHost{}
	m := NewTrayMenu(rec, host, nil)
	menu := m.Menu
	s := standbyState()
	if !m.Update(s) || host.shown != 2 || host.menu != menu {
		t.Fatalf("first state did not show the menu again (shown %d times)", host.shown)
	}
	want := []string{"Owner: daemon pid 4242 on laptop", "---", LabelOpen, LabelRunNow, LabelPauseAll, LabelResumeAll,
		"---", LabelTakeBack, "---", LabelAutoStart, "---", LabelQuit}
	if got := m.Labels(); !slices.Equal(got, want) {
		t.Errorf("standby menu:\n got %q\nwant %q", got, want)
	}
	if !m.Item("Owner:").Disabled {
		t.Error("status line is clickable")
	}
	s.Now = s.Now.Add(time.Second)
	if m.Update(s) || host.shown != 2 {
		t.Error("a state with nothing new for the tray refreshed the menu")
	}
	s.AutoStart = true // only a check mark changes
	if !m.Update(s) || host.shown != 3 {
		t.Errorf("checking Start at login did not show the menu again (shown %d times)", host.shown)
	}
	req := fixtureRequest()
	s.Mode, s.Pending, s.AutoStart = session.ModeOwning, &req, true
	if !m.Update(s) {
		t.Fatal("a pending request did not refresh the menu")
	}
	if m.Menu != menu {
		t.Error("the menu was replaced instead of updated in place")
	}
	if got := m.Item(approvePrefix); got == nil || got.Label != "Approve takeover by daemon (pid 4242)" {
		t.Errorf("approve item = %v; menu %q", got, m.Labels())
	}
	if m.Item("Owner:").Label != "Owner: this app · 3 routines" || !m.Item(LabelAutoStart).Checked {
		t.Errorf("owning menu: %q, start at login checked %t", m.Labels(), m.Item(LabelAutoStart).Checked)
	}
	sub := m.Item(LabelRunNow).ChildMenu.Items
	if len(sub) != 3 || sub[1].Label != "page-watch" {
		t.Fatalf("Run now submenu = %v", sub)
	}
	sub[1].Action()
	m.Item(LabelPauseAll).Action()
	m.Item(LabelQuit).Action()
	if got := rec.Calls(); !slices.Equal(got, []string{"run page-watch", "pause ", "quit"}) {
		t.Errorf("tray actions = %q", got)
	}
}

func TestSettingsView(t *testing.T) {
	test.NewTempApp(t)
	rec := &recorder{}
	v := NewSettingsView(rec, nil)
	s := standbyState()
	s.ConfigErr = "routines.toml:4:9: expected '=' after a key"
	s.Problems = []config.Problem{{File: "routines.toml", Line: 12, Col: 3, Routine: "x", Message: "unknown action \"rnu\""}}
	v.Update(s)
	if len(rec.Calls()) != 0 {
		t.Fatalf("showing the state fired actions: %q", rec.Calls())
	}
	for _, want := range []string{"routines.toml:4:9: expected", "routines.toml:12:3: unknown action"} {
		if !strings.Contains(v.problems.Text, want) {
			t.Errorf("problems %q lack %q", v.problems.Text, want)
		}
	}
	if !v.problems.TextStyle.Monospace {
		t.Error("config problems are not shown in monospace")
	}
	v.Update(standbyState())
	if v.problems.Text != "No problems found." || v.problems.TextStyle.Monospace {
		t.Errorf("a config without problems shows %q (monospace %v), want it plain: monospace fonts cost a few MB",
			v.problems.Text, v.problems.TextStyle.Monospace)
	}
	if v.policy.Selected != "Ask me" {
		t.Errorf("policy shows %q", v.policy.Selected)
	}
	v.policy.SetSelected("Always deny")
	if got := rec.Calls(); !slices.Equal(got, []string{"policy deny"}) {
		t.Errorf("choosing a policy sent %q", got)
	}
}

// The history opens on every routine's runs, shows them in columns (slot, started, late by,
// duration, outcome in colour, trigger), and the output of the selected run, wrapped.
func TestHistoryViewShowsRunsAndOutput(t *testing.T) {
	test.NewTempApp(t)
	rec := &recorder{}
	h := NewHistoryView(rec)
	h.background = func(f func()) { f() } // the test app's fyne.Do is not serialised with the test
	h.SetRoutines([]string{"morning-briefing", "page-watch"})
	if len(rec.Calls()) != 0 {
		t.Fatalf("the history read the journal before it was shown: %q", rec.Calls())
	}
	h.Shown()
	h.Shown() // once
	eventually(t, func() bool { return len(h.runs) == 1 })
	if got := rec.Calls(); !slices.Equal(got, []string{"history "}) || h.pick.Selected != AllRoutines {
		t.Errorf("history opened with reads %q on %q, want every routine's", got, h.pick.Selected)
	}
	run := h.runs[0]
	run.LateBy, run.Trigger, run.Reason = 1500*time.Millisecond, journal.TriggerCatchUp, "exit status 2"
	want := [numHCols]string{"page-watch", "09:00:00", "09:00:00", "1s", "1s", "failed: exit status 2", "catch-up", "—"}
	for c := range numHCols {
		if got, _ := HistoryCell(run, c, fixtureNow); got != want[c] {
			t.Errorf("column %s: %q, want %q", hcolTitles[c], got, want[c])
		}
	}
	if _, imp := HistoryCell(run, hcolOutcome, fixtureNow); imp != widget.DangerImportance {
		t.Errorf("a failed outcome has importance %v, want danger (red)", imp)
	}
	if h.output.Wrapping != fyne.TextWrapWord {
		t.Error("the output pane does not wrap long lines")
	}
	if h.output.TextStyle.Monospace {
		t.Error("the output pane is monospace before it shows an output (its fonts cost a few MB)")
	}
	h.table.Select(widget.TableCellID{Row: 0, Col: hcolOutcome})
	eventually(t, func() bool { return strings.Contains(h.output.Text, "+ new headline (run 8)") })
	if !h.output.TextStyle.Monospace {
		t.Error("a run's output is not shown in monospace")
	}
	h.pick.SetSelected("page-watch")
	if got := rec.Calls(); got[len(got)-1] != "history page-watch" {
		t.Errorf("choosing a routine read %q", got)
	}
	h.pick.SetSelected(AllRoutines)
	if got := rec.Calls(); got[len(got)-1] != "history " {
		t.Errorf("choosing all routines read %q", got)
	}
}

// The history fits a 760 px window: its columns share the width.
func TestHistoryFitsTheWindow(t *testing.T) {
	test.NewTempApp(t)
	h := NewHistoryView(&recorder{})
	h.Resize(fyne.NewSize(744, 400))
	var total float32
	for _, w := range h.widths {
		total += w
	}
	if total += float32(h.columns()) * theme.Padding(); total > 744 {
		t.Errorf("history columns take %.0f px of 744", total)
	}
}

// eventually waits for cond, which goroutines behind fyne.Do make true shortly.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHistoryFollowsNewRuns(t *testing.T) {
	test.NewTempApp(t)
	rec := &recorder{}
	h := NewHistoryView(rec)
	h.background = func(f func()) { f() }
	h.Load("page-watch")
	rs := fixtureRoutines()
	h.Follow(rs) // page-watch's last run (8) is newer than what was loaded: reload
	h.Follow(rs) // nothing new
	if got := rec.Calls(); !slices.Equal(got, []string{"history page-watch", "history page-watch"}) {
		t.Errorf("history reads = %q, want the first load and one reload", got)
	}
	// Every routine's view reloads when any routine has run.
	h.Load("")
	rs[0].Last.ID = 99
	h.Follow(rs)
	if got := rec.Calls(); !slices.Equal(got[2:], []string{"history ", "history "}) {
		t.Errorf("all-routines reads = %q, want the load and one reload", got[2:])
	}
}

func TestWindowMenuQuitGoesThroughActions(t *testing.T) {
	rec := &recorder{}
	m := NewMainMenu(rec, nil)
	items := m.Items[0].Items
	last := items[len(items)-1]
	if !last.IsQuit || last.Label != LabelQuit {
		t.Fatalf("last window menu item = %+v, want Quit", last)
	}
	last.Action()
	if got := rec.Calls(); !slices.Equal(got, []string{"quit"}) {
		t.Errorf("window Quit sent %q, want the app's draining Quit", got)
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 28 * time.Millisecond: "28ms", 42 * time.Second: "42s", 3*time.Minute + 5*time.Second: "3m 05s",
		12 * time.Minute: "12m", 2*time.Hour + 4*time.Minute: "2h 04m", 76 * time.Hour: "3d 4h",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

// perRoutine answers History with one run named after the routine asked for.
type perRoutine struct{ *recorder }

func (p perRoutine) History(routine string, _ int) ([]journal.Run, error) {
	return []journal.Run{{ID: int64(len(routine)), Routine: routine, Outcome: "success"}}, nil
}

// A slow read of the routine chosen first must not replace the history of the one chosen after.
func TestHistoryIgnoresAnAnswerForAnEarlierChoice(t *testing.T) {
	test.NewTempApp(t)
	h := NewHistoryView(perRoutine{&recorder{}})
	var reads []func()
	h.background = func(f func()) { reads = append(reads, f) }
	h.Load("morning-briefing")
	h.Load("page-watch")
	reads[1]() // page-watch answers first,
	eventually(t, func() bool { return len(h.runs) == 1 && h.runs[0].Routine == "page-watch" })
	reads[0]() // then the earlier read of morning-briefing
	time.Sleep(100 * time.Millisecond)
	var shown string
	fyne.DoAndWait(func() { shown = h.runs[0].Routine })
	if shown != "page-watch" {
		t.Errorf("history shows %s's runs while page-watch is chosen", shown)
	}
}

// Pause all is disabled once everything is paused, Resume all while nothing is.
func TestTrayPauseResumeFollowThePausedRoutines(t *testing.T) {
	test.NewTempApp(t)
	m := NewTrayMenu(&recorder{}, nil, nil)
	s := standbyState() // heartbeat is paused, the others run
	m.Update(s)
	if m.Item(LabelPauseAll).Disabled || m.Item(LabelResumeAll).Disabled {
		t.Errorf("some paused: pause all disabled %t, resume all disabled %t", m.Item(LabelPauseAll).Disabled, m.Item(LabelResumeAll).Disabled)
	}
	for i := range s.Routines {
		s.Routines[i].Paused = false
	}
	m.Update(s)
	if m.Item(LabelPauseAll).Disabled || !m.Item(LabelResumeAll).Disabled {
		t.Error("none paused: want Pause all enabled and Resume all disabled")
	}
	for i := range s.Routines {
		s.Routines[i].Paused = true
	}
	m.Update(s)
	if !m.Item(LabelPauseAll).Disabled || m.Item(LabelResumeAll).Disabled {
		t.Error("all paused: want Pause all disabled and Resume all enabled")
	}
}

// The session's goroutine updates the tray menu while the tray's goroutine runs its actions,
// with no UI loop between them: -race fails this if TrayMenu's state is not guarded.
func TestTrayMenuUpdatesWhileActionsRun(t *testing.T) {
	rec := &recorder{}
	m := NewTrayMenu(rec, &trayHost{}, nil)
	s := standbyState()
	req := fixtureRequest()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			s.AutoStart = i%2 == 0
			s.Pending = nil
			if i%3 == 0 {
				s.Pending = &req
			}
			m.Update(s)
		}
	}()
	for range 200 {
		m.auto.Action()
		m.deny.Action()
	}
	<-done
	logins := 0
	for _, c := range rec.Calls() {
		if strings.HasPrefix(c, "login ") {
			logins++
		}
	}
	if logins != 200 {
		t.Errorf("%d start-at-login calls recorded, want 200", logins)
	}
}

// History times stay short enough for their column however old the run.
func TestShortClock(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{*at(8, 0, 1), "08:00:01"},
		{fixtureNow.Add(-48 * time.Hour), "Sat 09:30"},
		{fixtureNow.Add(-30 * 24 * time.Hour), "31 Jan 09:30"},
		{fixtureNow.Add(-400 * 24 * time.Hour), "2025-01-26"},
	} {
		if got := ShortClock(c.t, fixtureNow); got != c.want {
			t.Errorf("%v: %q, want %q", c.t, got, c.want)
		}
	}
}

// Settings → Open, when nothing can open the file, hands the error to the window's error line
// (under the owner panel, above every tab: NewMainView wires it), and so does the menu's Open
// routines file.
func TestOpenConfigErrorShownInTheWindow(t *testing.T) {
	test.NewTempApp(t)
	rec := &recorder{openErr: errors.New("no application opened /home/ann/routines.toml (xdg-open: no method available)")}
	shown := make(chan error, 2)
	v := NewSettingsView(rec, func(err error) { shown <- err })
	open := buttons(v, "Open")
	if len(open) != 1 {
		t.Fatalf("%d Open buttons in the settings", len(open))
	}
	test.Tap(open[0])
	for _, from := range []string{"Settings → Open", "the menu's Open routines file"} {
		select {
		case err := <-shown:
			if !strings.Contains(err.Error(), "no application opened") {
				t.Errorf("%s showed %v", from, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s showed no error", from)
		}
		NewMainMenu(rec, func(err error) { shown <- err }).Items[0].Items[0].Action()
	}
	mv := NewMainView(rec)
	mv.ShowError(rec.openErr)
	if !mv.Error.Visible() || !strings.Contains(mv.Error.Text, "no application opened") {
		t.Error("the window's error line does not show the error")
	}
}

// Take back in the tray against a stuck owner also opens the window, where the failure is said
// and the banner offers to end the owner.
func TestTrayTakeBackAgainstAStuckOwnerOpensTheWindow(t *testing.T) {
	test.NewTempApp(t)
	rec := &recorder{}
	m := NewTrayMenu(rec, &trayHost{}, nil)
	s := standbyState()
	m.Update(s)
	m.Item(LabelTakeBack).Action()
	s.Stuck = &session.StuckOwner{PID: 4242, Role: ownership.RoleDaemon, Since: *at(9, 29, 19), EndableIn: 5 * time.Second}
	m.Update(s)
	m.Item(LabelTakeBack).Action()
	if got := rec.Calls(); !slices.Equal(got, []string{"take back", "take back", "show"}) {
		t.Errorf("Take back sent %q, want the window opened only against the stuck owner", got)
	}
}

// The tray's owner line counts routines in words: "1 routine", "2 routines".
func TestOwnerLineCountsRoutines(t *testing.T) {
	s := session.State{Mode: session.ModeOwning}
	for n, want := range map[int]string{0: "Owner: this app · 0 routines", 1: "Owner: this app · 1 routine", 2: "Owner: this app · 2 routines"} {
		s.Routines = make([]scheduler.RoutineState, n)
		if got := OwnerLine(s); got != want {
			t.Errorf("%d routines: %q, want %q", n, got, want)
		}
	}
}
