//go:build !(linux || freebsd || openbsd || netbsd) && !nogui

package desktop

// trayNeedsUILoop is true on macOS and Windows: their tray items live on the UI thread's event
// loop (NSApp, the Win32 message loop), so Fyne's loop starts at once.
const trayNeedsUILoop = true
