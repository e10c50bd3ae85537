package ui

import (
	"fmt"
	"strings"
	"sync"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/app/desktop/traymenu"
	"github.com/routinely/routinely/internal/termsafe"
)

// Tray menu labels the GUI test looks items up by.
const (
	LabelOpen       = "Open Routinely"
	LabelRunNow     = "Run now"
	LabelPauseAll   = "Pause all"
	LabelResumeAll  = "Resume all"
	LabelDeny       = "Deny"
	LabelTakeBack   = "Take back"
	LabelAutoStart  = "Start at login"
	LabelQuit       = "Quit"
	approvePrefix   = "Approve takeover by "
	noRoutinesLabel = "(no routines)"
)

// TrayHost is the system tray a TrayMenu and a TrayPresenter drive: app/desktop/tray in the app,
// nil or a recorder in tests.
type TrayHost interface {
	// Show makes the tray show m's current items (called again after m changed).
	Show(m *fyne.Menu)
	// SetIcon shows r as the tray icon.
	SetIcon(r fyne.Resource)
}

// TrayMenu is the tray's menu model. It keeps one *fyne.Menu and its items for the app's
// lifetime and changes them in place; it asks the host to show the menu again only when
// something visible changed (traymenu.Compare), so a once-a-second state update does not touch
// the D-Bus menu. It is safe for concurrent use: the session's goroutine updates it while the
// tray's click goroutines run its actions, and no UI loop is involved.
type TrayMenu struct {
	Menu     *fyne.Menu
	mu       sync.Mutex // guards Menu and its items after construction
	host     TrayHost
	status   *fyne.MenuItem
	open     *fyne.MenuItem
	runNow   *fyne.MenuItem
	pause    *fyne.MenuItem
	resume   *fyne.MenuItem
	approve  *fyne.MenuItem
	deny     *fyne.MenuItem
	takeBack *fyne.MenuItem
	auto     *fyne.MenuItem
	quit     *fyne.MenuItem
	actions  Actions
	onError  func(error)
	pending  string          // request id the approve/deny items answer
	stuck    bool            // the owner has stopped heartbeating (session.State.Stuck)
	shown    []traymenu.Item // what the host was last asked to show
}

// NewTrayMenu builds the menu shown by host (may be nil: nothing is shown); onError (may be nil)
// reports a failed action, on the goroutine that ran it.
func NewTrayMenu(a Actions, host TrayHost, onError func(error)) *TrayMenu {
	t := &TrayMenu{actions: a, host: host, onError: onError}
	t.status = &fyne.MenuItem{Label: "Starting…", Disabled: true}
	t.open = fyne.NewMenuItem(LabelOpen, a.ShowWindow)
	t.runNow = fyne.NewMenuItem(LabelRunNow, nil)
	t.runNow.ChildMenu = fyne.NewMenu("")
	t.pause = fyne.NewMenuItem(LabelPauseAll, func() { t.report(a.SetPaused("", true)) })
	t.resume = fyne.NewMenuItem(LabelResumeAll, func() { t.report(a.SetPaused("", false)) })
	t.approve = fyne.NewMenuItem(approvePrefix, func() { t.decide(true) })
	t.deny = fyne.NewMenuItem(LabelDeny, func() { t.decide(false) })
	t.takeBack = fyne.NewMenuItem(LabelTakeBack, func() {
		a.TakeBack()
		t.mu.Lock()
		stuck := t.stuck
		t.mu.Unlock()
		if stuck { // it cannot answer: the window says so, and its banner offers to end it
			a.ShowWindow()
		}
	})
	t.auto = fyne.NewMenuItem(LabelAutoStart, nil)
	t.auto.Action = func() {
		t.mu.Lock()
		on := !t.auto.Checked
		t.mu.Unlock()
		t.report(a.SetStartAtLogin(on))
	}
	t.quit = fyne.NewMenuItem(LabelQuit, a.Quit)
	t.quit.IsQuit = true
	t.Menu = fyne.NewMenu("Routinely")
	t.Update(session.State{})
	return t
}

// Update changes the menu in place to show s and has the host show it again if anything
// visible changed. It reports whether it did. Any goroutine may call it.
func (t *TrayMenu) Update(s session.State) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status.Label = termsafe.Escape(OwnerLine(s))
	t.auto.Checked = s.AutoStart
	t.pause.Disabled = len(s.Routines) == 0 || allPaused(s)
	t.resume.Disabled = !anyPaused(s)
	t.updateRunNow(s)
	items := []*fyne.MenuItem{t.status, fyne.NewMenuItemSeparator(), t.open, t.runNow, t.pause, t.resume}
	t.pending, t.stuck = "", s.Stuck != nil
	if s.Pending != nil {
		t.pending = s.Pending.ID
		t.approve.Label = approvePrefix + RequesterText(s.Pending.Requester)
		items = append(items, fyne.NewMenuItemSeparator(), t.approve, t.deny)
	}
	if s.Mode == session.ModeStandby && s.Owner.Held {
		items = append(items, fyne.NewMenuItemSeparator(), t.takeBack)
	}
	items = append(items, fyne.NewMenuItemSeparator(), t.auto, fyne.NewMenuItemSeparator(), t.quit)
	t.Menu.Items = items
	next := traymenu.Read(t.Menu)
	if traymenu.Compare(t.shown, next) == traymenu.Same {
		return false
	}
	t.shown = next
	if t.host != nil {
		t.host.Show(t.Menu)
	}
	return true
}

// Labels lists the menu's visible labels (separators as "---"), for tests and logs.
func (t *TrayMenu) Labels() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, it := range t.Menu.Items {
		if it.IsSeparator {
			out = append(out, "---")
			continue
		}
		out = append(out, it.Label)
	}
	return out
}

// Item returns the top-level item whose label starts with prefix (nil if none), for tests.
func (t *TrayMenu) Item(prefix string) *fyne.MenuItem {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, it := range t.Menu.Items {
		if !it.IsSeparator && strings.HasPrefix(it.Label, prefix) {
			return it
		}
	}
	return nil
}

func (t *TrayMenu) updateRunNow(s session.State) {
	var items []*fyne.MenuItem
	for _, r := range s.Routines {
		name := r.Name
		it := fyne.NewMenuItem(name, func() { t.report(t.actions.RunNow(name)) })
		it.Disabled = r.Disabled != ""
		items = append(items, it)
	}
	if len(items) == 0 {
		items = []*fyne.MenuItem{{Label: noRoutinesLabel, Disabled: true}}
	}
	t.runNow.ChildMenu.Items = items
}

func (t *TrayMenu) decide(approve bool) {
	t.mu.Lock()
	id := t.pending
	t.mu.Unlock()
	if id != "" {
		go func() {
			if err := t.actions.Decide(id, approve); err != nil {
				t.report(fmt.Errorf("answer takeover request: %w", err))
			}
		}()
	}
}

func (t *TrayMenu) report(err error) {
	if err != nil && t.onError != nil {
		t.onError(err)
	}
}
