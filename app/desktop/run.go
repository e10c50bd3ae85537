//go:build !nogui

package desktop

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"

	"fyne.io/fyne/v2/app"

	"github.com/routinely/routinely/app/autostart"
	"github.com/routinely/routinely/app/desktop/bridge"
	"github.com/routinely/routinely/app/desktop/instance"
	_ "github.com/routinely/routinely/app/desktop/locale" // before Fyne reads the locale
	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/app/desktop/tray"
	"github.com/routinely/routinely/app/owning"
	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/app/ui"
	"github.com/routinely/routinely/ownership"
)

// appID is the id the app registers with (notifications, preferences); FyneApp.toml's ID.
const appID = autostart.AppID

// Run starts the desktop app on profile p and blocks until it quits (it is the cli.DesktopFunc
// main.go hands to the CLI); it always returns nil: what went wrong is logged, and a second launch
// of a running profile is a success. With background the window stays hidden until the person
// opens it from the tray or a takeover request needs an answer.
//
// This process holds the tray, the notifications and the owner; it never runs Fyne's loop. The
// window lives in a window process of its own (bridge.Spawner, RunWindowProcess), so that
// closing it ends Fyne's 60 Hz loop and frees its OpenGL context, which one process cannot do.
// Call Run on the main goroutine: on macOS the tray's event loop needs the main thread (tray.Main).
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
	tray.Main(func() { runApp(ctx, p, inst, background, version, logger) })
	logger.Info("desktop app stopped")
	return nil
}

// runApp runs the app until it has quit: the session (owner or standby), the tray, and the
// window process while the window is open. inst is the profile's claim (nil when the check could
// not be made: its methods then do nothing).
func runApp(ctx context.Context, p paths.Paths, inst *instance.Primary, background bool, version string, logger *slog.Logger) {
	a := app.NewWithID(appID) // notifications and opening files; its loop never runs here
	a.SetIcon(ui.AppIcon)

	sctx, stopSession := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSession()
	alerts, closeAlerts := newAlerter(a, logger)
	defer closeAlerts() // after the session's last notification (defers run last-in first-out)
	feed := bridge.NewFeed()
	// Assigned below: the session publishes only once sess.Run has started, further down.
	var trayPres *ui.TrayPresenter
	sess := session.New(session.Options{
		Paths: p, Version: version, Logger: logger, Notifier: ui.Notifier{Alerts: alerts},
		// Each snapshot goes to the tray and to the window process, if one is open (the feed
		// keeps only the newest for it).
		Publish: func(st session.State) { trayPres.Apply(st); feed.Publish(st) },
	})
	sessDone := make(chan struct{})
	acts := &actions{Session: sess, app: a, p: p, logger: logger, stop: stopSession}
	acts.spawner = &bridge.Spawner{Command: windowCommand, Acts: acts, Feed: feed, Logger: logger}

	// A left click shows the window (on macOS a click opens the menu, whose Open does); the end of
	// the app by the system (Windows and macOS logout, which wait for the tray's answer) quits
	// and drains.
	tr := tray.New("Routinely", acts.ShowWindow, func() { acts.Quit(); <-sessDone })
	defer tr.Stop()
	trayPres = ui.NewTrayPresenter(tr, acts, alerts, func(err error) {
		logger.Warn("tray action failed", "err", err)
		alerts.Send(ui.Alert{Title: "Routinely: that did not work", Body: err.Error(), Warning: true})
		feed.ShowError(err) // in the window too, if one is open
	})
	// Runs once the session has ended (its refresh loop made the last Apply): a takeover
	// question still on screen has nobody left to answer it.
	defer trayPres.Withdraw()
	trayPres.OnRequest = func(ownership.Request) { acts.ShowWindow() } // the prompt is in the window
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
		case <-ctx.Done(): // a stop signal: drain, release and exit as Quit does
			logger.Info("stop signal received", "signal", signalName(owning.SignalOf(ctx)))
			acts.Quit()
		case <-sessDone:
		}
	}()

	<-sessDone // Quit, a signal or a failure
	// Close the window process (after a Quit this only waits for it): it is told to close and
	// killed after windowGrace, so the app never exits before its window.
	acts.spawner.Stop(windowGrace)
}

// windowCommand is the command that starts a window process: this very binary (on Linux,
// /proc/self/exe names it even if the file was replaced by an update meanwhile, so both ends
// speak the same bridge), with the marker in its environment. When the system cannot say where
// this binary is, the command's Err says so and its Start returns that error.
func windowCommand() *exec.Cmd {
	exe, err := "/proc/self/exe", error(nil)
	if runtime.GOOS != "linux" {
		exe, err = os.Executable()
	}
	cmd := exec.Command(exe)
	if err != nil {
		cmd.Err = fmt.Errorf("cannot find this program's binary to start the window: %w", err)
	}
	cmd.Args = []string{os.Args[0]}
	cmd.Env = append(os.Environ(), bridge.EnvWindowProcess+"=1")
	if os.Stderr != nil { // a Windows GUI-subsystem process may have none
		cmd.Stderr = os.Stderr // its log goes where the app's goes
	}
	return cmd
}

// signalName names sig for the log, "none" when the context ended without a signal.
func signalName(sig os.Signal) string {
	if sig == nil {
		return "none"
	}
	return owning.SignalName(sig)
}
