package cli

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/routinely/routinely/app/paths"
)

// DesktopFunc starts the desktop app on the profile p and blocks until it quits. background
// starts it with no window shown (what autostart uses). It returns nil on a clean quit. It is
// called on the goroutine that called Execute, which must be main's: the desktop app's tray runs
// AppKit's loop on the main thread on macOS (app/desktop/tray.Main).
type DesktopFunc func(ctx context.Context, p paths.Paths, background bool, version string, logger *slog.Logger) error

// runDesktop starts the desktop app, or explains why it cannot and what to run instead: the
// binary was built with -tags nogui (desktop == nil), or on Linux there is no display to draw
// on, or $DISPLAY names a local X display nobody serves (GLFW would panic). Both print what to run instead and return an exitError with code 1 and
// nothing more to print. Other errors: the state directory's (77) and the desktop app's (1).
func runDesktop(ctx context.Context, e *env, desktop DesktopFunc, background bool) error {
	if desktop == nil {
		fmt.Fprint(e.stderr, `This routinely binary was built without the desktop app (-tags nogui).
Run your routines headless instead:
  routinely daemon            own the schedule in this terminal (Ctrl-C stops it)
  routinely status            see who owns and what ran
Build the desktop app with 'make build' (needs the GL/X11 headers: 'make deps').
`)
		return withCode(ExitError, nil)
	}
	if runtime.GOOS == "linux" && e.getenv("DISPLAY") == "" && e.getenv("WAYLAND_DISPLAY") == "" {
		fmt.Fprint(e.stderr, `No graphical session: neither $DISPLAY nor $WAYLAND_DISPLAY is set, so the desktop app
cannot open its tray icon. On a server or over SSH, run your routines headless instead:
  routinely daemon
`)
		return withCode(ExitError, nil)
	}
	if d := e.getenv("DISPLAY"); runtime.GOOS == "linux" && e.getenv("WAYLAND_DISPLAY") == "" && d != "" && !displayReachable(d) {
		fmt.Fprintf(e.stderr, `Cannot reach the display %s ($DISPLAY): no X server answers there, so the desktop
app cannot open its tray icon. Check $DISPLAY, or run your routines headless instead:
  routinely daemon
`, d)
		return withCode(ExitError, nil)
	}
	p, err := e.resolve()
	if err != nil {
		return err
	}
	if err := desktop(ctx, p, background, Version, e.logger); err != nil {
		return fmt.Errorf("desktop app: %w", err)
	}
	return nil
}
