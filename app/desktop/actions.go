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

// actions adds the app's own actions (show the window, open the config, quit) to the session's.
type actions struct {
	*session.Session
	app     fyne.App
	spawner *bridge.Spawner // the window process
	p       paths.Paths
	logger  *slog.Logger
	stop    context.CancelFunc // ends the session: it drains and releases
	quit    sync.Once
}

// ShowWindow brings the window up and focuses it. It is the one way the window is opened (the
// tray's Open, a click on the icon except on macOS, a takeover request, a later launch, a start
// without --background): it starts a window process, or raises the window of the one that runs. Any
// goroutine may call it (tray clicks arrive on the tray's own).
func (a *actions) ShowWindow() {
	defer a.Refresh() // the new window gets the state at once
	if err := a.spawner.Show(); err != nil && !errors.Is(err, bridge.ErrShut) {
		a.logger.Error("cannot open the window", "err", err)
	}
}

// OpenConfig opens routines.toml with the person's default app (its folder if it is missing).
// It waits for the system's opener to say whether it could (up to openWait); its callers are the
// tray's action goroutine and the window's rpc goroutine. Errors: the folder cannot be created;
// no opener, or none that handles the file (openPath's).
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

// Quit stops the scheduler, waits for in-flight runs, releases ownership, then ends the app
// (Run returns once the session has ended and the window process has exited; at a macOS logout
// AppKit ends the process instead, once the drain is done). The tray stays up meanwhile (its
// status line says it is finishing runs); the window closes at once. It returns at once and only
// its first call counts; any goroutine may call it (the tray's Quit, the window's, a stop signal,
// the system's logout).
func (a *actions) Quit() {
	a.quit.Do(func() {
		a.logger.Info("quitting: draining runs and releasing ownership")
		a.Stopping()
		go a.spawner.Stop(windowGrace) // the window closes now; the drain goes on meanwhile
		a.stop()
	})
}
