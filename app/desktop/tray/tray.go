//go:build (linux || freebsd || openbsd || netbsd || windows || darwin) && !nogui

// Package tray shows the app's tray item and its menu through fyne.io/systray (a StatusNotifierItem
// on Linux/BSD, a notification-area icon on Windows, a menu bar item on macOS), without Fyne's
// driver, so no GL window and no Fyne loop exist in the app (its window lives in a window
// process). It decides how a new menu reaches the system: the existing items updated in place,
// or rebuilt when traymenu.Compare finds the menu reshaped. Where the system's tray needs the
// process's main thread (macOS), Main runs its event loop there.
package tray

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/systray"

	"github.com/routinely/routinely/app/desktop/traymenu"
)

// queueLen bounds the clicks waiting for the action goroutine. Clicks come at human speed, so
// a full queue means an action is stuck; dropping then is better than stalling a receiver.
const queueLen = 16

// created enforces one Tray per process: fyne.io/systray keeps its item, menu and callbacks in
// package variables, and its end function can run only once.
var created atomic.Bool

// Tray is the process's one system tray item (fyne.io/systray is a process-wide singleton).
type Tray struct {
	start, end func() // from register: systray's start and end

	// mu serialises Start, Stop, SetIcon and Show: systray's menu calls are not safe to
	// interleave (its Linux code reads and grows the layout tree in separate steps).
	mu      sync.Mutex
	started bool
	stopped bool
	// conn is what systray shows the item on (see link and canStart in tray_*.go): on Linux/BSD
	// the session-bus connection, which can end under the app at any time; from then on the
	// item is gone and live reports false.
	conn      link
	gone      bool            // the loss of conn was logged
	icon      fyne.Resource   // last SetIcon, applied by Start if set earlier
	pending   []traymenu.Item // last Show before Start, built by Start
	shown     []traymenu.Item // what systray shows now
	nodes     []*node         // the systray items showing it, in the same tree shape
	checkable map[string]bool // labels ever seen Checked: see Show

	listeners sync.WaitGroup // one per built systray item; Stop waits for them
	actions   chan func()    // clicks handed to the action goroutine
	done      chan struct{}  // closed by Stop to end the action goroutine
}

// node is one item built in systray (item nil for a separator); Tray.shown holds what it shows.
type node struct {
	item *systray.MenuItem
	// action is the item's Action at the most recent Show; the item's receiver reads it per
	// click, so an in-place Show can swap it without touching the receiver.
	action   atomic.Pointer[func()]
	children []*node
}

// New registers the tray with fyne.io/systray and returns it; onTapped (may be nil) runs on a left
// click of the icon, on the tray's action goroutine like menu actions, except on macOS, where a
// click opens the menu as every menu bar item's does (clickOpensMenu). onSessionEnd (may be nil)
// runs when the system ends the app (Windows: WM_ENDSESSION at logout; macOS: logout or a Quit
// Apple Event) on the tray's event loop, which the system waits for and then ends the process:
// it should quit, drain and return only once the app is done. It shows nothing until Start.
// Call it once per process: a second call panics.
//
// title names the item for the desktop (Linux/BSD: the StatusNotifierItem Id and Title, some
// hosts misbehave without one, as Fyne notes; Windows and macOS: its tooltip).
func New(title string, onTapped, onSessionEnd func()) *Tray {
	if !created.CompareAndSwap(false, true) {
		panic("tray.New called twice: fyne.io/systray supports one tray per process")
	}
	t := &Tray{
		checkable: map[string]bool{},
		actions:   make(chan func(), queueLen),
		done:      make(chan struct{}),
	}
	if onTapped != nil && !clickOpensMenu {
		// Set before start: on Linux systray exports ItemIsMenu=false only if a tap handler
		// exists then, and it calls the handler on a D-Bus goroutine that must not block.
		systray.SetOnTapped(func() { t.dispatch(onTapped) })
	}
	t.start, t.end = register(title, onSessionEnd)
	return t
}

// Start begins showing the item (systray's start function), then applies the icon and menu given
// earlier. Any goroutine may call it: the item lives on the session D-Bus, served by systray's
// own goroutines (on Windows on systray's window, whose message loop runs on a thread of its own;
// on macOS on AppKit's loop, which Main runs on the main thread), so no Fyne loop is needed. Start
// blocks, holding the tray's lock (so SetIcon and Show wait too), until the item exists: on
// Windows up to readyWait, on macOS until Main's loop has launched (warning after slowLaunch).
// Idempotent; a no-op after Stop. Without a session bus (Linux/BSD) it logs, shows nothing and
// stays unstarted (a later call retries), because systray's end function would crash on the
// connection it never made.
func (t *Tray) Start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started || t.stopped {
		return
	}
	conn, err := canStart()
	if err != nil {
		slog.Warn("tray: cannot show the system tray item", "err", err)
		return
	}
	t.started, t.conn = true, conn
	t.start()
	go t.runActions()
	if t.icon != nil {
		t.applyIcon(t.icon)
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
	// ResetMenu also closes every item's ClickedCh (ending the receivers), which Stop needs even
	// when the bus is gone; with the bus gone its D-Bus signal only fails and is logged.
	systray.ResetMenu()
	t.nodes, t.shown = nil, nil
	t.end()
	close(t.done)
	t.listeners.Wait()
}

// SetIcon shows r as the tray icon. r must be a PNG (SVG is not rasterised).
// Before Start it is kept and applied by Start; after Stop, or once the session bus has gone,
// it does nothing. It never panics. Safe from any goroutine.
func (t *Tray) SetIcon(r fyne.Resource) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.icon = r
	if t.live() {
		t.applyIcon(r)
	}
}

// live reports whether systray may be called now: started, not stopped, and its link open (on
// Linux/BSD the session-bus connection; on Windows and macOS always). Every systray call that
// reaches the system is made under t.mu after live returned true (the one rule that keeps the
// tray from being updated after it ended). Call with t.mu held.
func (t *Tray) live() bool {
	if !t.started || t.stopped {
		return false
	}
	if !t.conn.Connected() {
		if !t.gone {
			t.gone = true
			slog.Warn("tray: the connection the tray item lives on closed; the tray item is gone")
		}
		return false
	}
	return true
}

// applyIcon calls systray.SetIcon with the icon in the form it takes here (iconData). On
// Linux/BSD systray.SetIcon panics (godbus prop.SetMust) when emitting its
// PropertiesChanged signal fails. That happens when the bus connection closes between live's
// check and the emit: no check can rule that out, because the bus may end at any instant. The
// panic is recovered here, where systray's and godbus's locks have been released by their
// defers, and the icon is simply not shown: the item is gone with the bus anyway. A panic that
// is not such an error is not ours to hide and is re-raised. Call with t.mu held.
func (t *Tray) applyIcon(r fyne.Resource) {
	if len(r.Content()) == 0 {
		slog.Warn("tray: empty icon", "name", r.Name())
		return
	}
	content, err := iconData(r.Content())
	if err != nil {
		slog.Warn("tray: could not show the icon", "name", r.Name(), "err", err)
		return
	}
	defer func() {
		if p := recover(); p != nil {
			err, ok := p.(error)
			if !ok {
				panic(p)
			}
			if !linkClosed(err) {
				slog.Warn("tray: could not show the icon", "err", err)
			}
			t.live() // logs the loss once if that is what happened
		}
	}()
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
// When traymenu.Compare finds the menu changed only in place (labels, Disabled and Checked; the
// same items, separators and submenu lengths, the same checkability) the existing systray items
// are updated (SetTitle, Enable/Disable, Check/Uncheck, only where a value changed), so D-Bus
// menu ids stay stable; when it finds the menu reshaped, the systray menu is reset
// (systray.ResetMenu) and rebuilt with new ids.
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
	items := traymenu.Read(m)
	t.markCheckable(items)
	if !t.started {
		t.pending = items
		return
	}
	if !t.live() {
		return
	}
	t.apply(items)
}

// markCheckable applies the checkability rule to items: first it remembers the labels checked
// anywhere in this menu, then it marks the items to build as checkboxes.
func (t *Tray) markCheckable(items []traymenu.Item) {
	var remember func([]traymenu.Item)
	remember = func(items []traymenu.Item) {
		for _, it := range items {
			if it.Checked {
				t.checkable[it.Label] = true
			}
			remember(it.Children)
		}
	}
	var mark func([]traymenu.Item)
	mark = func(items []traymenu.Item) {
		for i := range items {
			it := &items[i]
			it.Checkable = !it.Separator && (it.Checked || t.checkable[it.Label])
			mark(it.Children)
		}
	}
	remember(items)
	mark(items)
}

// apply makes systray show items, in place unless traymenu.Compare finds the menu reshaped.
func (t *Tray) apply(items []traymenu.Item) {
	if traymenu.Compare(t.shown, items) != traymenu.Reshaped {
		update(t.nodes, t.shown, items)
		t.shown = items
		return
	}
	if t.nodes != nil {
		systray.ResetMenu() // removes the items, closing their ClickedCh: old receivers end
	}
	var ready sync.WaitGroup
	t.nodes = t.build(items, nil, &ready)
	t.shown = items
	// A click that arrives before an item's receiver waits is dropped by systray: return only
	// once every receiver is about to wait.
	ready.Wait()
}

// update makes nodes, which show shown, show next (the same shape): it swaps every action and
// calls only the setters whose value changed, since each emits D-Bus signals on Linux.
func update(nodes []*node, shown, next []traymenu.Item) {
	for i, n := range nodes {
		was, now := shown[i], next[i]
		if now.Separator {
			continue
		}
		action := now.Action
		n.action.Store(&action)
		if was.Label != now.Label {
			n.item.SetTitle(now.Label)
		}
		if was.Disabled != now.Disabled {
			if now.Disabled {
				n.item.Disable()
			} else {
				n.item.Enable()
			}
		}
		if was.Checked != now.Checked {
			if now.Checked {
				n.item.Check()
			} else {
				n.item.Uncheck()
			}
		}
		update(n.children, was.Children, now.Children)
	}
}

// build adds items to systray under parent (nil: the top level) and starts their receivers.
func (t *Tray) build(items []traymenu.Item, parent *systray.MenuItem, ready *sync.WaitGroup) []*node {
	nodes := make([]*node, len(items))
	for i, it := range items {
		n := &node{}
		nodes[i] = n
		if it.Separator {
			if parent == nil {
				systray.AddSeparator()
			} else {
				parent.AddSeparator()
			}
			continue
		}
		switch {
		case parent == nil && it.Checkable:
			n.item = systray.AddMenuItemCheckbox(it.Label, "", it.Checked)
		case parent == nil:
			n.item = systray.AddMenuItem(it.Label, "")
		case it.Checkable:
			n.item = parent.AddSubMenuItemCheckbox(it.Label, "", it.Checked)
		default:
			n.item = parent.AddSubMenuItem(it.Label, "")
		}
		if it.Disabled {
			n.item.Disable()
		}
		action := it.Action
		n.action.Store(&action)
		ready.Add(1)
		t.listeners.Add(1)
		go t.receive(n, ready)
		n.children = t.build(it.Children, n.item, ready)
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
// systray's tap callback on a D-Bus goroutine on Linux/BSD or systray's message-loop thread on
// Windows).
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
