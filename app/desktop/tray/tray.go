//go:build (linux || freebsd || openbsd || netbsd) && !nogui

// Package tray shows the app's StatusNotifierItem and its menu on Linux/BSD through fyne.io/systray,
// without Fyne's driver, so no GL window exists before the app's window is first shown.
package tray

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

// queueLen bounds the clicks waiting for the action goroutine. Clicks come at human speed, so
// a full queue means an action is stuck; dropping then is better than stalling a receiver.
const queueLen = 16

// created enforces one Tray per process: fyne.io/systray keeps its item, menu and callbacks in
// package variables, and its end function can run only once.
var created atomic.Bool

// Tray is the process's one system tray item (fyne.io/systray is a process-wide singleton).
type Tray struct {
	start, end func() // from systray.RunWithExternalLoop

	// mu serialises Start, Stop, SetIcon and Show: systray's menu calls are not safe to
	// interleave (its Linux code reads and grows the layout tree in separate steps).
	mu        sync.Mutex
	started   bool
	stopped   bool
	icon      fyne.Resource   // last SetIcon, applied by Start if set earlier
	pending   []entry         // last Show before Start, built by Start
	nodes     []*node         // what is built in systray now
	checkable map[string]bool // labels ever seen Checked: see Show

	listeners sync.WaitGroup // one per built systray item; Stop waits for them
	actions   chan func()    // clicks handed to the action goroutine
	done      chan struct{}  // closed by Stop to end the action goroutine
}

// entry is one menu item as it was when Show read it; nothing reads the *fyne.MenuItem later.
type entry struct {
	separator bool
	label     string
	disabled  bool
	checked   bool
	checkable bool
	action    func()
	children  []entry
}

// node is one item built in systray (item nil for a separator) and the state last applied to it.
type node struct {
	separator bool
	item      *systray.MenuItem
	label     string
	disabled  bool
	checked   bool
	checkable bool
	// action is the item's Action at the most recent Show; the item's receiver reads it per
	// click, so an in-place Show can swap it without touching the receiver.
	action   atomic.Pointer[func()]
	children []*node
}

// New registers the tray with fyne.io/systray (systray.RunWithExternalLoop) and returns it;
// onTapped (may be nil) runs on a left click of the icon, on the tray's action goroutine like menu
// actions. It shows nothing until Start. Call it once per process: a second call panics.
//
// title names the item for the desktop (the StatusNotifierItem Id and Title; some hosts misbehave
// without one, as Fyne notes).
func New(title string, onTapped func()) *Tray {
	if !created.CompareAndSwap(false, true) {
		panic("tray.New called twice: fyne.io/systray supports one tray per process")
	}
	t := &Tray{
		checkable: map[string]bool{},
		actions:   make(chan func(), queueLen),
		done:      make(chan struct{}),
	}
	if onTapped != nil {
		// Set before start: on Linux systray exports ItemIsMenu=false only if a tap handler
		// exists then, and it calls the handler on a D-Bus goroutine that must not block.
		systray.SetOnTapped(func() { t.dispatch(onTapped) })
	}
	systray.SetTitle(title)
	t.start, t.end = systray.RunWithExternalLoop(nil, nil)
	return t
}

// Start begins showing the item (systray's start function), then applies the icon and menu given
// earlier. Any goroutine may call it: the item lives on the session D-Bus, served by systray's
// own goroutines, so no UI loop is needed. Idempotent; a no-op after Stop. Without a session bus
// it logs, shows nothing and stays unstarted (a later call retries), because systray's end
// function would crash on the connection it never made.
func (t *Tray) Start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started || t.stopped {
		return
	}
	if err := canStart(); err != nil {
		slog.Warn("tray: cannot show the system tray item", "err", err)
		return
	}
	t.started = true
	t.start()
	go t.runActions()
	if t.icon != nil {
		applyIcon(t.icon)
	}
	if t.pending != nil {
		t.apply(t.pending)
		t.pending = nil
	}
}

// Stop removes the item (systray's end function) after removing its menu, which ends the menu's
// receiver goroutines; it waits for those but not for a running action, so an action may call
// Stop. Idempotent; a no-op if never started. fyne.io/systray cannot start again afterwards. On
// Linux systray closes the process's shared dbus.SessionBus connection here: later
// dbus.SessionBus calls reconnect, but holders of the old *dbus.Conn see it closed.
func (t *Tray) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started || t.stopped {
		return
	}
	t.stopped = true
	systray.ResetMenu() // closes every item's ClickedCh
	t.nodes = nil
	t.end()
	close(t.done)
	t.listeners.Wait()
}

// SetIcon shows r as the tray icon. r is a PNG (as Fyne's tray takes it: SVG is not rasterised).
// Before Start it is kept and applied by Start. Safe from any goroutine.
func (t *Tray) SetIcon(r fyne.Resource) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.icon = r
	if t.started && !t.stopped {
		applyIcon(r)
	}
}

func applyIcon(r fyne.Resource) {
	content := r.Content()
	if len(content) == 0 {
		slog.Warn("tray: empty icon", "name", r.Name())
		return
	}
	systray.SetIcon(content)
}

// Show makes the tray menu show m's current items: labels, separators, Disabled, Checked and
// ChildMenu submenus (nested ones too); Icon and Shortcut are ignored, and unlike Fyne no Quit item
// is added. m may be nil (an empty menu). Call it again after changing m; Show reads m only
// during the call, so the caller may mutate it afterwards under its own lock. Before Start the
// items are kept and built by Start; after Stop it does nothing.
//
// A click on an item runs the Action the item had at the most recent Show (nil: the click is
// ignored) on the tray's single action goroutine, in click order, so one slow action delays the
// next; actions should be quick or start their own goroutines. Each systray item has a receiver
// goroutine that only hands clicks to that goroutine, because systray drops a click when no
// receiver is waiting.
//
// When only labels, Disabled and Checked changed (same sequence of items and separators, same
// submenu lengths, same checkability) the existing systray items are updated in place (SetTitle,
// Enable/Disable, Check/Uncheck), so D-Bus menu ids stay stable; otherwise the systray menu is
// reset (systray.ResetMenu) and rebuilt with new ids.
//
// Checkability rule: on Linux only items built as checkboxes can show a check mark, so an item is
// built as a checkbox if it is Checked now or if any item with the same label was Checked at an
// earlier Show (labels are remembered for the process's lifetime). A toggle such as "Start at
// login" thus stays a checkbox while unchecked, and an item whose label was never checked has no
// checkbox. Safe from any goroutine; calls are serialised.
func (t *Tray) Show(m *fyne.Menu) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	var items []*fyne.MenuItem
	if m != nil {
		items = m.Items
	}
	entries := t.read(items)
	t.markCheckable(entries)
	if !t.started {
		t.pending = entries
		return
	}
	t.apply(entries)
}

// read copies items (skipping nil ones) and records the labels of checked items.
func (t *Tray) read(items []*fyne.MenuItem) []entry {
	var out []entry
	for _, i := range items {
		if i == nil {
			continue
		}
		if i.IsSeparator {
			out = append(out, entry{separator: true})
			continue
		}
		e := entry{label: i.Label, disabled: i.Disabled, checked: i.Checked, action: i.Action}
		if i.Checked {
			t.checkable[i.Label] = true
		}
		if i.ChildMenu != nil {
			e.children = t.read(i.ChildMenu.Items)
		}
		out = append(out, e)
	}
	return out
}

// markCheckable applies the checkability rule once the whole menu's checked labels are known.
func (t *Tray) markCheckable(entries []entry) {
	for i := range entries {
		e := &entries[i]
		e.checkable = !e.separator && (e.checked || t.checkable[e.label])
		t.markCheckable(e.children)
	}
}

// apply makes systray show entries, in place when the shape allows it.
func (t *Tray) apply(entries []entry) {
	if sameShape(t.nodes, entries) {
		update(t.nodes, entries)
		return
	}
	if t.nodes != nil {
		systray.ResetMenu() // removes the items, closing their ClickedCh: old receivers end
	}
	var ready sync.WaitGroup
	t.nodes = t.build(entries, nil, &ready)
	// A click that arrives before an item's receiver waits is dropped by systray: return only
	// once every receiver is about to wait.
	ready.Wait()
}

func sameShape(nodes []*node, entries []entry) bool {
	if len(nodes) != len(entries) {
		return false
	}
	for i, n := range nodes {
		e := entries[i]
		if n.separator != e.separator || n.checkable != e.checkable || !sameShape(n.children, e.children) {
			return false
		}
	}
	return true
}

// update changes only what differs, since every systray setter emits D-Bus signals on Linux.
func update(nodes []*node, entries []entry) {
	for i, n := range nodes {
		e := entries[i]
		if n.separator {
			continue
		}
		action := e.action
		n.action.Store(&action)
		if n.label != e.label {
			n.item.SetTitle(e.label)
			n.label = e.label
		}
		if n.disabled != e.disabled {
			if e.disabled {
				n.item.Disable()
			} else {
				n.item.Enable()
			}
			n.disabled = e.disabled
		}
		if n.checked != e.checked {
			if e.checked {
				n.item.Check()
			} else {
				n.item.Uncheck()
			}
			n.checked = e.checked
		}
		update(n.children, e.children)
	}
}

// build adds entries to systray under parent (nil: the top level) and starts their receivers.
func (t *Tray) build(entries []entry, parent *systray.MenuItem, ready *sync.WaitGroup) []*node {
	nodes := make([]*node, len(entries))
	for i, e := range entries {
		n := &node{separator: e.separator}
		nodes[i] = n
		if e.separator {
			if parent == nil {
				systray.AddSeparator()
			} else {
				parent.AddSeparator()
			}
			continue
		}
		switch {
		case parent == nil && e.checkable:
			n.item = systray.AddMenuItemCheckbox(e.label, "", e.checked)
		case parent == nil:
			n.item = systray.AddMenuItem(e.label, "")
		case e.checkable:
			n.item = parent.AddSubMenuItemCheckbox(e.label, "", e.checked)
		default:
			n.item = parent.AddSubMenuItem(e.label, "")
		}
		if e.disabled {
			n.item.Disable()
		}
		n.label, n.disabled, n.checked, n.checkable = e.label, e.disabled, e.checked, e.checkable
		action := e.action
		n.action.Store(&action)
		ready.Add(1)
		t.listeners.Add(1)
		go t.receive(n, ready)
		n.children = t.build(e.children, n.item, ready)
	}
	return nodes
}

// receive hands n's clicks to the action goroutine until systray removes the item (Remove closes
// ClickedCh). It does nothing else between clicks, since systray drops a click nobody receives.
func (t *Tray) receive(n *node, ready *sync.WaitGroup) {
	defer t.listeners.Done()
	clicks := n.item.ClickedCh
	ready.Done()
	for range clicks {
		if action := n.action.Load(); action != nil && *action != nil {
			t.dispatch(*action)
		}
	}
}

// dispatch queues f for the action goroutine without blocking the caller (a receiver, or
// systray's tap callback on a D-Bus or UI goroutine).
func (t *Tray) dispatch(f func()) {
	select {
	case t.actions <- f:
	default:
		slog.Warn("tray: click dropped, an earlier tray action is still running")
	}
}

// runActions runs queued actions one at a time, in click order, until Stop.
func (t *Tray) runActions() {
	for {
		select {
		case f := <-t.actions:
			f()
		case <-t.done:
			return
		}
	}
}

// canStart reports whether systray can export the item: its start function only logs a failed
// session-bus connection, and its end function then dereferences the missing connection.
// systray uses the same shared dbus.SessionBus connection, which this call opens and caches.
func canStart() error {
	_, err := dbus.SessionBus()
	return err
}
