//go:build (linux || freebsd || openbsd || netbsd || windows) && !nogui

package tray

// Main calls f and returns when it has returned. The tray needs no thread of the caller's here:
// on Linux/BSD systray's D-Bus goroutines serve it, on Windows a thread its start locks for
// itself (see tray_darwin.go for the system where it does).
func Main(f func()) { f() }

// clickOpensMenu is false here: a left click runs New's onTapped (the desktop's convention for a
// tray icon: open the app), and the menu is on the right click.
const clickOpensMenu = false
