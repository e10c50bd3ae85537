//go:build !nogui

package desktop

import (
	"sync"

	"github.com/routinely/routinely/app/desktop/session"
)

// publisher hands session snapshots to the tray at once (where it needs no UI loop) and to the
// window through the UI loop.
// For the window it keeps only the newest snapshot when the UI is behind, so the session never
// waits for the UI loop and the queue never grows; while the loop is idle it only keeps the
// newest, which flush applies when the loop starts. After stop it drops snapshots: once Fyne's
// loop has ended, fyne.Do runs its function inline on the caller's goroutine, and the window
// must not be touched from the session's.
type publisher struct {
	loop   *uiLoop
	tray   func(session.State) // TrayPresenter.Apply: at once, or on the UI goroutine if trayOnUI
	window func(session.State) // Presenter.Apply: on the UI goroutine
	feed   func(session.State) // bridge.Feed.Publish, for a window process: at once
	// trayOnUI sends tray updates through the UI loop with the window's, where the tray lives on
	// that loop (macOS, Windows: see trayNeedsUILoop).
	trayOnUI bool

	mu      sync.Mutex
	latest  session.State
	queued  bool
	stopped bool
}

// publish is the session's Publish hook: it shows st in the tray now and queues it for the
// window. The session calls it from its refresh goroutine only, so the tray presenter (not safe
// for concurrent use) needs no lock: it runs either there or, with trayOnUI, on the UI goroutine.
func (p *publisher) publish(st session.State) {
	if !p.trayOnUI {
		p.applyTray(st)
	}
	if p.feed != nil {
		p.feed(st)
	}

	p.mu.Lock()
	p.latest = st
	p.mu.Unlock()
	p.flush()
}

// flush queues the newest snapshot for the window if the loop is live and none is queued yet.
func (p *publisher) flush() {
	p.mu.Lock()
	// The loop's state is read under p.mu: a flush racing with the loop's start either queues
	// the snapshot itself or leaves queued false for the start's own flush.
	if p.queued || p.stopped || !p.loop.live() {
		p.mu.Unlock()
		return
	}
	p.queued = true
	p.mu.Unlock()
	uiDo(p.applyLatest)
}

func (p *publisher) applyLatest() {
	p.mu.Lock()
	st, apply, stopped := p.latest, p.window, p.stopped
	p.queued = false
	p.mu.Unlock()
	if stopped {
		return
	}
	if p.trayOnUI {
		p.applyTray(st)
	}
	if apply != nil {
		apply(st)
	}
}

func (p *publisher) applyTray(st session.State) {
	if p.tray != nil {
		p.tray(st)
	}
}

// stop drops every later snapshot for the window, including one already handed to fyne.Do.
func (p *publisher) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}
