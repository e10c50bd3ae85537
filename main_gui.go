//go:build !nogui

package main

import "github.com/routinely/routinely/app/desktop"

// desktopEntry starts the Fyne tray app; absent from -tags nogui builds.
var desktopEntry = desktop.Run

// windowProcess hosts the desktop app's window when this process was started for it.
var windowProcess = desktop.RunWindowProcess
