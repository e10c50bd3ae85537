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

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/app/paths"
)

// actions adds the window-side actions (show, open the config, quit) to the session's.
type actions struct {
	*session.Session
	app    fyne.App
	win    fyne.Window
	p      paths.Paths
	logger *slog.Logger
	stop   context.CancelFunc
	done   <-chan struct{}
	quit   sync.Once
	// ended is set once the UI loop has stopped (SIGTERM makes the driver quit by itself);
	// after that, fyne.Do runs inline and the app must not be quit a second time.
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
// The tray stays up meanwhile (its status line says it is finishing runs). Call it on the UI
// goroutine.
func (a *actions) Quit() {
	if a.ended.Load() {
		return
	}
	a.quit.Do(func() {
		a.logger.Info("quitting: draining runs and releasing ownership")
		a.Stopping()
		a.win.Hide()
		a.stop()
		go func() {
			<-a.done
			fyne.Do(func() {
				if !a.ended.Load() {
					a.app.Quit()
				}
			})
		}()
	})
}
