//go:build darwin && !nogui

package desktop

/*
#cgo LDFLAGS: -framework CoreServices
#include <stdlib.h>
#include <CoreServices/CoreServices.h>

// quitNow handles the Quit Apple Event (logout, restart, a Dock's Quit): the window process holds
// nothing to save, so it ends at once.
static OSErr quitNow(const AppleEvent *event, AppleEvent *reply, SRefCon refcon) {
	exit(0);
	return noErr;
}

// installQuitNow makes quitNow the process's handler for the Quit Apple Event, in place of
// AppKit's, and returns the Apple Event Manager's result (noErr: installed).
static OSErr installQuitNow(void) {
	return AEInstallEventHandler(kCoreEventClass, kAEQuitApplication, NewAEEventHandlerUPP(quitNow), NULL, 0);
}
*/
import "C"

import "log/slog"

// quitOnSystemRequest makes the window process end at once when the system asks it to quit
// (logout, restart, shut down, a Quit from its Dock icon). AppKit would hand that request to
// GLFW's applicationShouldTerminate, which only asks the windows to close and answers
// NSTerminateCancel, and a cancel answer makes macOS abandon the logout. Call it on the main
// thread once Fyne's loop has started (Lifecycle's OnStarted): AppKit installs its own handler
// when it finishes launching, in GLFW's start-up, and a later install replaces it.
func quitOnSystemRequest(logger *slog.Logger) {
	if err := C.installQuitNow(); err != 0 { // 0 is noErr
		logger.Warn("window process: cannot handle the system's quit request; a logout may wait for the window to be closed",
			"os_err", int(err))
	}
}
