//go:build !nogui

package main

import "github.com/routinely/routinely/app/desktop"

// desktopEntry starts the Fyne tray app; absent from -tags nogui builds.
var desktopEntry = desktop.Run
