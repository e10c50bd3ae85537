//go:build !darwin && !nogui

package desktop

import "log/slog"

// quitOnSystemRequest does nothing here: nothing in the window process can hold up the end of
// the session. On Linux/BSD it arrives as a signal; on Windows GLFW leaves WM_QUERYENDSESSION to
// DefWindowProc, which agrees, and the system then ends the process.
func quitOnSystemRequest(*slog.Logger) {}
