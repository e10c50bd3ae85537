//go:build (linux || freebsd || openbsd || netbsd || windows) && !nogui

package desktop

import (
	"os"
	"os/exec"
	"runtime"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/bridge"
	"github.com/routinely/routinely/app/desktop/tray"
)

// trayNeedsUILoop is false here: the tray is fyne.io/systray's (a StatusNotifierItem on the
// session D-Bus, served by systray's goroutines; on Windows a notification-area icon with its own
// message loop on a thread of its own), so the app needs no Fyne loop for it.
const trayNeedsUILoop = false

// windowInChild is true here: with the tray needing no UI loop, the window can live in a window
// process of its own (bridge.Spawner, RunWindowProcess), so that closing it ends Fyne's loop
// and frees its OpenGL context, which one process cannot do.
const windowInChild = true

// windowCommand is the command that starts a window process: this very binary (on Linux,
// /proc/self/exe names it even if the file was replaced by an update meanwhile, so both ends
// speak the same bridge), with the marker in its environment.
func windowCommand() *exec.Cmd {
	exe := "/proc/self/exe"
	if runtime.GOOS != "linux" {
		exe, _ = os.Executable()
	}
	cmd := exec.Command(exe)
	cmd.Args = []string{os.Args[0]}
	cmd.Env = append(os.Environ(), bridge.EnvWindowProcess+"=1")
	if os.Stderr != nil { // a Windows GUI-subsystem process may have none
		cmd.Stderr = os.Stderr // its log goes where the app's goes
	}
	return cmd
}

// newTrayHost is our own tray (app/desktop/tray), not Fyne's: Fyne's opens a hidden OpenGL window
// at start-up, which loads Mesa and needs Fyne's loop running. onTapped runs on a left click;
// onSessionEnd when the system ends the session (Windows logout; it should quit and drain).
func newTrayHost(_ fyne.App, _ fyne.Window, onTapped, onSessionEnd func()) trayHost {
	return tray.New("Routinely", onTapped, onSessionEnd)
}
