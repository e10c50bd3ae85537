//go:build !nogui

package desktop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/bridge"
	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/app/paths"
)

// actions adds the window-side actions (show, open the config, quit) to the session's.
type actions struct {
	*session.Session
	app fyne.App
	// The window is either in a window process (spawner set: windowInChild) or in this process
	// (win set, shown through Fyne's loop here).
	spawner *bridge.Spawner
	win     fyne.Window
	// windowError shows a failed tray action in the window, if one is open.
	windowError func(error)
	p           paths.Paths
	logger      *slog.Logger
	pub         *publisher
	loop        *uiLoop
	stop        context.CancelFunc
	done        <-chan struct{} // closed when the session has drained and released
	runDone     <-chan struct{} // closed when Fyne's Run has returned
	exit        func(code int)
	quit        sync.Once
}

// ShowWindow brings the window up and focuses it. It is the one way the window is opened (the
// tray's Open, a click on the icon, a takeover request, a start without --background): it
// starts a window process, or raises the window of the one that runs; in-process, it starts
// Fyne's loop if it has not run yet. Any goroutine may call it (tray clicks arrive on the
// tray's own).
func (a *actions) ShowWindow() {
	defer a.Refresh() // the new window gets the state at once
	if a.spawner != nil {
		if err := a.spawner.Show(); err != nil && !errors.Is(err, bridge.ErrShut) {
			a.logger.Error("cannot open the window", "err", err)
		}
		return
	}
	a.loop.show(func() {
		a.win.Show()
		a.win.RequestFocus()
	})
}

// OpenConfig opens routines.toml with the person's default app (its folder if it is missing).
// It waits for the system's opener to say whether it could (up to openWait), so call it off
// the UI goroutine. Errors: the folder cannot be created; no opener, or none that handles the
// file (openPath's).
func (a *actions) OpenConfig() error {
	target := a.p.Config
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		if err := a.p.EnsureConfigDir(); err != nil {
			return fmt.Errorf("open the routines file: %w", err)
		}
		target = filepath.Dir(target)
	}
	if err := openPath(a.app, target); err != nil {
		a.logger.Warn("open config", "path", target, "err", err)
		return err
	}
	return nil
}

// windowGrace is how long a window process gets to close its window at Quit before it is killed.
const windowGrace = 2 * time.Second

// Quit stops the scheduler, waits for in-flight runs, releases ownership, then ends the app.
// The tray stays up meanwhile (its status line says it is finishing runs). It returns at once;
// any goroutine may call it (the tray's Quit runs on the tray's goroutine, the window menu's on
// the UI goroutine).
func (a *actions) Quit() { a.shutdown(true) }

// shutdown is Quit. fromUI is false after SIGINT/SIGTERM: Fyne ends its loop by itself on
// those, so the window and the app are left alone (once the loop has ended, fyne.Do runs its
// function inline on the calling goroutine, off the UI thread). SIGHUP, which Fyne does not
// watch, is handled as a Quit (fromUI true).
func (a *actions) shutdown(fromUI bool) {
	a.quit.Do(func() {
		a.logger.Info("quitting: draining runs and releasing ownership")
		a.loop.shut() // a window asked for from now on must not start Fyne's loop
		a.Stopping()
		if a.spawner != nil {
			go a.spawner.Stop(windowGrace) // the window closes now; the drain goes on meanwhile
		} else if fromUI {
			a.loop.do(a.win.Hide)
		}
		a.stop()
		go a.finish(fromUI)
	})
}

// finish ends Fyne's loop once the session has drained and released, then makes sure the
// process ends even if Fyne's Run does not return (see toolkitGrace).
func (a *actions) finish(quitApp bool) {
	<-a.done
	a.pub.stop()
	if quitApp {
		// While the loop is idle there is nothing to quit: Run's goroutine sees the session
		// end and returns without starting it.
		a.loop.do(func() {
			if !a.loop.ended() {
				a.app.Quit()
			}
		})
	}
	t := time.NewTimer(toolkitGrace)
	defer t.Stop()
	select {
	case <-a.runDone: // Run returned: it logs and returns to the command line as usual
	case <-t.C:
		a.logger.Warn("the UI toolkit did not return from its run loop after Quit (a known Fyne v2.7.1 shutdown race); " +
			"exiting now: runs were drained and ownership released")
		a.logger.Info("desktop app stopped")
		a.exit(0)
	}
}
