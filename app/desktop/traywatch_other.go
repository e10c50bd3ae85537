//go:build !(linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import "time"

// trayHostPresent: Windows and macOS always have a tray (notification area, menu bar).
func trayHostPresent(time.Duration) (bool, string) { return true, "" }
