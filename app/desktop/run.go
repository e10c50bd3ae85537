//go:build !nogui

package desktop

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"

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

// Run starts the desktop app on profile p and blocks until it quits (CONTRACT: matches cli.DesktopFunc).
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
	sessDone := make(chan struct{})
	acts := &actions{Session: sess, app: a, win: win, p: p, logger: logger, stop: stopSession, done: sessDone}
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
		case <-ctx.Done(): // the caller wants us gone: quit the same way as the menu
			fyne.Do(acts.Quit)
		case <-sessDone:
		}
	}()

	a.Lifecycle().SetOnStopped(func() { acts.ended.Store(true) })
	a.Run()
	acts.ended.Store(true)
	// The driver can also end the loop by itself (SIGTERM, its tray's own quit): drain anyway.
	stopSession()
	<-sessDone
	logger.Info("desktop app stopped")
	return nil
}

// publisher hands session snapshots to the UI goroutine, keeping only the newest when the UI is
// behind, so the session never waits for the UI loop and the queue never grows.
type publisher struct {
	mu     sync.Mutex
	latest ui.State
	queued bool
	apply  func(ui.State)
}

func (p *publisher) publish(st ui.State) {
	p.mu.Lock()
	p.latest = st
	if p.queued {
		p.mu.Unlock()
		return
	}
	p.queued = true
	p.mu.Unlock()
	fyne.Do(func() {
		p.mu.Lock()
		st, apply := p.latest, p.apply
		p.queued = false
		p.mu.Unlock()
		if apply != nil {
			apply(st)
		}
	})
}
