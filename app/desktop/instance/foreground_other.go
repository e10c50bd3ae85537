//go:build !windows

package instance

// allowForeground does nothing here: X11, Wayland and macOS have no foreground right for a launch
// to pass on (on X11 the running app raises its own window).
func allowForeground() {}
