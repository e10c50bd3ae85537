package instance

import "golang.org/x/sys/windows"

// asfwAny is ASFW_ANY: every process may take the foreground.
const asfwAny = ^uintptr(0)

var allowSetForegroundWindow = windows.NewLazySystemDLL("user32.dll").NewProc("AllowSetForegroundWindow")

// allowForeground lets the running app bring its window to the front. Windows refuses
// SetForegroundWindow to a process that is not in the foreground (focus-stealing prevention);
// the launch the person just started is, and may pass that right on with
// AllowSetForegroundWindow (see the SetForegroundWindow documentation,
// https://learn.microsoft.com/windows/win32/api/winuser/nf-winuser-allowsetforegroundwindow).
// A failure only means the window may flash in the taskbar instead of coming up.
func allowForeground() {
	if allowSetForegroundWindow.Find() == nil {
		_, _, _ = allowSetForegroundWindow.Call(asfwAny)
	}
}
