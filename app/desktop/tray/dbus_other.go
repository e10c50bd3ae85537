//go:build !nogui && !((linux || freebsd || openbsd || netbsd) && !android)

package tray

// canStart: outside D-Bus desktops systray's start has no connection that can fail.
func canStart() error { return nil }

// setTitle does nothing: on macOS a title is text shown beside the icon in the menu bar, and
// Windows has none.
func setTitle(string) {}
