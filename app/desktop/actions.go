//go:build !nogui

package desktop

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/app/paths"
)

// actions adds the window-side actions (show, open the config, quit) to the session's.
type actions struct {
	*session.Session
	app     fyne.App
	win     fyne.Window
	p       paths.Paths
	logger  *slog.Logger
	pub     *publisher
	stop    context.CancelFunc
	done    <-chan struct{} // closed when the session has drained and released
	runDone <-chan struct{} // closed when Fyne's Run has returned
	exit    func(code int)
	quit    sync.Once
	// ended is set once Fyne's Run has returned; the app must not be quit a second time.
	ended atomic.Bool
}

// ShowWindow brings the window up and focuses it.
func (a *actions) ShowWindow() {
	a.win.Show()
	a.win.RequestFocus()
}

// OpenConfig opens routines.toml with the person's default app (its folder if it is missing).
func (a *actions) OpenConfig() {
	target := a.p.Config
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		if err := a.p.EnsureConfigDir(); err != nil {
			a.logger.Warn("open config", "err", err)
		}
		target = filepath.Dir(target)
	}
	if err := a.app.OpenURL(&url.URL{Scheme: "file", Path: target}); err != nil {
		a.logger.Warn("open config", "path", target, "err", err)
	}
}

// Quit stops the scheduler, waits for in-flight runs, releases ownership, then ends the app.
// The tray stays up meanwhile (its status line says it is finishing runs). It returns at once;
// the tray and window menus call it on the UI goroutine.
func (a *actions) Quit() { a.shutdown(true) }

// shutdown is Quit from any goroutine. fromUI is false after SIGINT/SIGTERM: Fyne ends its loop
// by itself on those, so the window and the app are left alone (once the loop has ended,
// fyne.Do runs its function inline on the calling goroutine, off the UI thread).
func (a *actions) shutdown(fromUI bool) {
	a.quit.Do(func() {
		a.logger.Info("quitting: draining runs and releasing ownership")
		a.Stopping()
		if fromUI && !a.ended.Load() {
			uiDo(a.win.Hide)
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
	if quitApp && !a.ended.Load() {
		uiDo(func() {
			if !a.ended.Load() {
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
