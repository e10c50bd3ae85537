//go:build !nogui

package desktop

import (
	"errors"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"github.com/routinely/routinely/app/desktop/bridge"
	_ "github.com/routinely/routinely/app/desktop/locale" // before Fyne reads the locale
	"github.com/routinely/routinely/app/ui"
)

// RunWindowProcess hosts the app's window when this process is a window process (the app's
// binary re-executed by bridge.Spawner with bridge.EnvWindowProcess=1). It reports false at
// once otherwise. As a window process it shows the window, applies each state the app sends
// and sends the person's actions to the app. It exits the process with code 0 as soon as the
// window is closed, the app asks it to close, or the connection to the app ends (the app died:
// no window outlives it); it returns 0 if Fyne ends its loop by itself (SIGINT, SIGTERM), and 1
// when the connection cannot be set up.
//
// Fyne's loop (60 Hz) and the window's OpenGL context cannot be stopped or restarted within a
// process, so the window lives in a process of its own that exits with it: once it is closed,
// the app is back to its tray-only footprint.
func RunWindowProcess() (code int, ok bool) {
	if !bridge.IsWindowProcess() {
		return 0, false
	}
	_ = os.Unsetenv(bridge.EnvWindowProcess) // not for anything this process starts
	logger := slog.Default().With("process", "window", "pid", os.Getpid())
	conn, err := bridge.ChildConn()
	if err != nil {
		logger.Error("cannot reach the app", "err", err)
		return 1, true
	}
	if os.Getenv("GOGC") == "" {
		// GOGC 20, lower than the app's 50 (appGCPercent): the heap is ~10 MB of parsed fonts and
		// views that stay live, and little is allocated beyond the redraws (every ~10 s), so
		// collecting at 20 % costs one or two ~5 ms collections per redraw (~0.1 % of a core)
		// and keeps ~3 MB less resident (gctrace and footprint.sh; README "Performance").
		debug.SetGCPercent(windowGCPercent)
	}

	a := app.NewWithID(windowAppID)
	a.SetIcon(ui.AppIcon)
	win := a.NewWindow("Routinely")
	win.Resize(fyne.NewSize(1000, 640))
	// This process holds nothing to save or release, so it ends by exiting at once: Fyne's own
	// shutdown would only rewrite its preferences file in place (which another window process
	// may be reading), and Fyne v2.7.1 can fail to return from Run at all: it can lose its
	// OnStopped lifecycle event at shutdown and wait for it forever in Lifecycle.WaitForEvents.
	exit := func(why string) {
		logger.Info("window process exits", "reason", why)
		os.Exit(0)
	}
	// Closing the window ends this process, and with it Fyne's loop and the GL context.
	win.SetCloseIntercept(func() { exit("the window was closed") })

	var pres *ui.Presenter
	client := bridge.NewClient(conn, func(err error) { uiDo(func() { pres.View.ShowError(err) }) })
	acts := &windowActions{Client: client, raise: func() { uiDo(func() { raise(win) }) }}
	pres = ui.NewPresenter(win, acts)
	win.SetMainMenu(ui.NewMainMenu(acts, pres.View.ShowError))

	a.Lifecycle().SetOnStarted(func() { quitOnSystemRequest(logger) })
	go followApp(client, pres, win, exit, logger)
	win.Show()
	a.Run() // returns only if Fyne ends its loop by itself (SIGINT, SIGTERM)
	_ = client.Close()
	return 0, true
}

// The processes' GOGC when the environment sets none: the app's (tray, notifications, the
// owner) and its window process's (see RunWindowProcess for why the window's is lower).
const (
	appGCPercent    = 50
	windowGCPercent = 20
)

// heapTrimDelay is how long after the last state it applied the window process hands its free
// Go heap back to the OS (debug.FreeOSMemory): long enough for Fyne's loop to have redrawn.
// Between states the window allocates next to nothing, so the pages the redraw freed would
// otherwise stay resident until the runtime's background scavenger gets to them: 2-3 MB of the
// window's RSS (footprint.sh), for one forced collection of ~5 ms per state (README
// "Performance").
const heapTrimDelay = 2 * time.Second

// windowAppID is the window process's Fyne app id. It is not the app's own: Fyne watches its
// preferences file and rewrites it in place when its loop stops, and two processes sharing one
// would read each other's half-written file ("Preferences load error: EOF"). Neither process
// keeps anything in Fyne's preferences.
const windowAppID = appID + ".window"

// followApp applies the app's news to the window until the app closes it or the connection
// ends, then exits. Each update is applied before the next is asked for, so a busy window
// never queues states: the app keeps only the newest for it.
func followApp(c *bridge.Client, pres *ui.Presenter, win fyne.Window, exit func(why string), logger *slog.Logger) {
	var cur bridge.Cursor
	trim := time.AfterFunc(heapTrimDelay, debug.FreeOSMemory)
	for {
		u, err := c.Next(cur)
		if err != nil {
			if !errors.Is(err, bridge.ErrDisconnected) {
				logger.Warn("window process: reading the app's state", "err", err)
			}
			exit("the app has gone")
			return
		}
		cur = u.Cursor
		if u.Closed {
			exit("the app is quitting")
			return
		}
		uiDoAndWait(func() {
			pres.Apply(u.State)
			if u.Error != "" {
				pres.View.ShowError(errors.New(u.Error))
			}
			if u.Raise {
				raise(win)
			}
		})
		trim.Reset(heapTrimDelay)
	}
}

// uiDo is fyne.Do for goroutines that may outlive Fyne's loop: when the loop ends at the same
// moment (the driver quits by itself on SIGTERM), Fyne v2.7.1 can close its queue between its
// "drained" check and the send, which panics with a send on a closed channel. Losing the update
// is right then: there is no window left to update.
func uiDo(f func()) {
	defer func() { _ = recover() }()
	fyne.Do(f)
}

// uiDoAndWait is fyne.DoAndWait that swallows the panic of a call racing the loop's end, as
// uiDo does: the window is going away then, and so is this process.
func uiDoAndWait(f func()) {
	defer func() { _ = recover() }()
	fyne.DoAndWait(f)
}

// raise shows win and asks for the focus; call it on the UI goroutine.
func raise(win fyne.Window) {
	win.Show()
	win.RequestFocus()
}

// windowActions are the window's actions in a window process: the app's, over the bridge,
// and ShowWindow, which raises this process's own window.
type windowActions struct {
	*bridge.Client
	raise func()
}

// ShowWindow raises the window.
func (w *windowActions) ShowWindow() { w.raise() }

var _ ui.Actions = (*windowActions)(nil)
