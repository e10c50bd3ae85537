//go:build !nogui

package desktop

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"github.com/routinely/routinely/app/autostart"
	"github.com/routinely/routinely/app/desktop/bridge"
	_ "github.com/routinely/routinely/app/desktop/locale" // before Fyne reads the locale
	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/app/owning"
	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/app/ui"
	"github.com/routinely/routinely/ownership"
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

// Run starts the desktop app on profile p and blocks until it quits (it is the cli.DesktopFunc
// main.go hands to the CLI). With background the window stays hidden until the person opens it
// from the tray or a takeover request needs an answer. On Linux and the BSDs the window lives
// in a window process of its own (windowInChild), so this process never runs Fyne's loop.
func Run(ctx context.Context, p paths.Paths, background bool, version string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	if os.Getenv("GOGC") == "" {
		// A long-lived tray app: trade a little GC work for less resident memory (footprint.sh).
		debug.SetGCPercent(appGCPercent)
	}
	inst, handed := claimProfile(p.State, background, logger)
	if handed {
		return nil
	}
	defer inst.Close()
	a := app.NewWithID(appID)
	a.SetIcon(ui.AppIcon)

	sctx, stopSession := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSession()
	loop := newUILoop()
	pub := &publisher{loop: loop}
	alerts, closeAlerts := newAlerter(a, logger)
	defer closeAlerts() // after the session's last notification (defers run last-in first-out)
	sess := session.New(session.Options{
		Paths: p, Version: version, Logger: logger, Notifier: ui.Notifier{Alerts: alerts}, Publish: pub.publish,
	})
	sessDone, runDone := make(chan struct{}), make(chan struct{})
	acts := &actions{Session: sess, app: a, p: p, logger: logger, pub: pub, loop: loop,
		stop: stopSession, done: sessDone, runDone: runDone, exit: os.Exit}
	if windowInChild {
		// The window lives in a window process of its own, started when it is wanted and
		// ended when it is closed (windowproc.go); this process never starts Fyne's loop.
		feed := bridge.NewFeed()
		acts.spawner = &bridge.Spawner{Command: windowCommand, Acts: acts, Feed: feed, Logger: logger}
		acts.windowError = feed.ShowError
		pub.feed = feed.Publish
	} else {
		win := a.NewWindow("Routinely") // Fyne creates the OS window and its GL context on first Show
		win.Resize(fyne.NewSize(1000, 640))
		win.SetCloseIntercept(win.Hide) // closing hides; only Quit ends the app
		pres := ui.NewPresenter(win, acts)
		win.SetMainMenu(ui.NewMainMenu(acts, pres.View.ShowError))
		acts.win = win
		acts.windowError = func(err error) { loop.do(func() { pres.View.ShowError(err) }) }
		pub.window = pres.Apply
	}

	// A left click shows the window; the end of the desktop session (Windows logout, which
	// waits for the tray's answer) quits and drains.
	tr := newTrayHost(a, acts.win, acts.ShowWindow, func() { acts.Quit(); <-sessDone })
	defer tr.Stop()
	trayPres := ui.NewTrayPresenter(tr, acts, alerts, func(err error) {
		logger.Warn("tray action failed", "err", err)
		alerts.Send(ui.Alert{Title: "Routinely: that did not work", Body: err.Error(), Warning: true})
		acts.windowError(err)
	})
	// Runs once the session has ended (its refresh loop made the last Apply): a takeover
	// question still on screen has nobody left to answer it.
	defer trayPres.Withdraw()
	trayPres.OnRequest = func(ownership.Request) { acts.ShowWindow() } // the prompt is in the window
	pub.tray, pub.trayOnUI = trayPres.Apply, trayNeedsUILoop
	tr.SetIcon(ui.LookStandby.Resource())
	tr.Start()
	// A later launch of this profile shows the window as the tray's Open does; once the app
	// starts quitting, the profile is free for a new app (which stands by until this one has
	// released the routines).
	inst.Serve(acts.ShowWindow)
	go func() { <-sctx.Done(); inst.Close() }()

	if !background {
		acts.ShowWindow()
	}
	go warnIfNoTray(logger, acts.ShowWindow)
	go func() {
		defer close(sessDone)
		if err := sess.Run(sctx); err != nil {
			logger.Error("desktop session", "err", err)
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			// A stop signal: drain, release and exit as Quit does. Fyne ends its loop by itself
			// on SIGINT and SIGTERM (if it runs), so the window gets no more updates and is left
			// alone; it does not watch SIGHUP (the terminal that started the app closed), so
			// then this is a Quit in full, which also ends Fyne's loop once drained.
			sig := owning.SignalOf(ctx)
			logger.Info("stop signal received", "signal", signalName(sig))
			toolkitQuits := sig == syscall.SIGINT || sig == syscall.SIGTERM
			if toolkitQuits {
				pub.stop()
			}
			acts.shutdown(!toolkitQuits)
		case <-sessDone:
		}
	}()

	if windowInChild {
		<-sessDone // Quit, a signal or a failure
		// The shutdown told the window process to close; wait until it has (or kill it after
		// windowGrace), so that the app never exits before its window.
		acts.spawner.Stop(windowGrace)
		loop.shut()
	}
	ok, show := loop.begin()
	if !ok { // quitting before the window was ever opened
		<-sessDone
		loop.end()
		close(runDone)
		logger.Info("desktop app stopped")
		return nil
	}
	if show {
		acts.win.Show() // on the main goroutine before Run, as Fyne allows
	}
	pub.flush()
	a.Run()
	loop.end()
	pub.stop()
	close(runDone)
	// The driver can also end the loop by itself (SIGTERM): drain anyway.
	stopSession()
	<-sessDone
	logger.Info("desktop app stopped")
	return nil
}

// signalName names sig for the log, "none" when the context ended without a signal.
func signalName(sig os.Signal) string {
	if sig == nil {
		return "none"
	}
	return owning.SignalName(sig)
}
