//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import (
	"os"
	"os/exec"
	"runtime"

	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/bridge"
	"github.com/routinely/routinely/app/desktop/tray"
)

// trayNeedsUILoop is false here: the tray is a StatusNotifierItem on the session D-Bus, served by
// fyne.io/systray's own goroutines, so Fyne's loop can wait until the window is wanted, and tray
// updates need not go through it.
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
	cmd.Stderr = os.Stderr // its log goes where the app's goes
	return cmd
}

// newTrayHost is our own tray (app/desktop/tray), not Fyne's: Fyne's opens a hidden OpenGL window
// at start-up, which loads Mesa and needs Fyne's loop running. onTapped runs on a left click.
func newTrayHost(_ fyne.App, _ fyne.Window, onTapped func()) trayHost {
	return tray.New("Routinely", onTapped)
}
