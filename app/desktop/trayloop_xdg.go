//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package desktop

// trayNeedsUILoop is false here: the tray is a StatusNotifierItem on the session D-Bus, served
// by fyne.io/systray's own goroutines, so Fyne's loop can wait until the window is wanted.
const trayNeedsUILoop = false
