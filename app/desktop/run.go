//go:build !nogui

package desktop

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/routinely/routinely/app/autostart"
	_ "github.com/routinely/routinely/app/desktop/locale" // before Fyne reads the locale
	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/app/ui"
)

// appID is the id the app registers with (notifications, preferences); FyneApp.toml's ID.
const appID = autostart.AppID

// toolkitGrace is how long the app waits, once its own shutdown is complete (runs drained,
// ownership released), for Fyne's Run to return before it exits by itself. Fyne v2.7.1 can lose
// its OnStopped lifecycle event at shutdown: the event goroutine hands it to the main loop with
// runOnMainWithWait just after the loop's last drain of its function queue, waits forever for
// it, and Run blocks for good in Lifecycle.WaitForEvents (seen once in 15 to 50 runs of
// gui-test.sh; goroutine dump: main in WaitForEvents, the lifecycle goroutine in
// runOnMainWithWait). The loop itself has ended by then (windows destroyed, tray removed), so
// there is nothing left to wait for.
const toolkitGrace = 2 * time.Second

// Run starts the desktop app on profile p and blocks until it quits (it is the cli.DesktopFunc main.go hands to the CLI).
func Run(ctx context.Context, p paths.Paths, background bool, version string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	if os.Getenv("GOGC") == "" {
		// A long-lived tray app: trade a little GC work for ~15 MB less resident memory (measured
		// with footprint.sh: 195 → 180 MB with the window shown).
		debug.SetGCPercent(50)
	}
	a := app.NewWithID(appID)
	a.SetIcon(ui.AppIcon)
	win := a.NewWindow("Routinely")
	win.Resize(fyne.NewSize(1000, 640))
	win.SetCloseIntercept(win.Hide) // closing hides; only Quit ends the app

	sctx, stopSession := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSession()
	pub := &publisher{}
	sess := session.New(session.Options{
		Paths: p, Version: version, Logger: logger, Notifier: ui.Notifier{App: a}, Publish: pub.publish,
	})
	sessDone, runDone := make(chan struct{}), make(chan struct{})
	acts := &actions{Session: sess, app: a, win: win, p: p, logger: logger, pub: pub,
		stop: stopSession, done: sessDone, runDone: runDone, exit: os.Exit}
	pres := ui.NewPresenter(a, win, acts)
	win.SetMainMenu(ui.NewMainMenu(acts))
	pres.Notify = func(n *fyne.Notification) { go a.SendNotification(n) } // a D-Bus call can be slow
	pub.apply = pres.Apply

	if d, ok := a.(desktop.App); ok {
		d.SetSystemTrayIcon(ui.LookStandby.Resource())
		d.SetSystemTrayMenu(pres.Tray.Menu) // always a menu: GNOME hides a tray item without one
		d.SetSystemTrayWindow(win)          // a left click shows the window
	}
	if !background {
		win.Show()
	}
	go warnIfNoTray(logger, win)
	go func() {
		defer close(sessDone)
		if err := sess.Run(sctx); err != nil {
			logger.Error("desktop session", "err", err)
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			// SIGINT/SIGTERM: Fyne ends its loop by itself on these, so the window gets no more
			// updates; drain, release and exit as Quit does.
			pub.stop()
			acts.shutdown(false)
		case <-sessDone:
		}
	}()

	a.Run()
	acts.ended.Store(true)
	pub.stop()
	close(runDone)
	// The driver can also end the loop by itself (SIGTERM, its tray's own quit): drain anyway.
	stopSession()
	<-sessDone
	logger.Info("desktop app stopped")
	return nil
}

// publisher hands session snapshots to the UI goroutine, keeping only the newest when the UI is
// behind, so the session never waits for the UI loop and the queue never grows. After stop it
// drops snapshots: once Fyne's loop has ended, fyne.Do runs its function inline on the caller's
// goroutine, and the window and tray must not be touched from the session's.
type publisher struct {
	mu      sync.Mutex
	latest  ui.State
	queued  bool
	stopped bool
	apply   func(ui.State)
}

func (p *publisher) publish(st ui.State) {
	p.mu.Lock()
	p.latest = st
	if p.queued || p.stopped {
		p.mu.Unlock()
		return
	}
	p.queued = true
	p.mu.Unlock()
	uiDo(func() {
		p.mu.Lock()
		st, apply, stopped := p.latest, p.apply, p.stopped
		p.queued = false
		p.mu.Unlock()
		if apply != nil && !stopped {
			apply(st)
		}
	})
}

// stop drops every later snapshot, including one already handed to fyne.Do.
func (p *publisher) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}

// uiDo is fyne.Do for goroutines that may outlive Fyne's loop: when the loop ends at the same
// moment (the driver quits by itself on SIGTERM), Fyne v2.7.1 can close its queue between its
// "drained" check and the send, which panics with a send on a closed channel. Losing the update
// is right then: there is no window left to update.
func uiDo(f func()) {
	defer func() { _ = recover() }()
	fyne.Do(f)
}
