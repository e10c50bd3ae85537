//go:build nogui

package main

import "github.com/routinely/routinely/app/cli"

// desktopEntry is nil in a nogui build: `routinely` alone explains how to run the daemon.
var desktopEntry cli.DesktopFunc

// windowProcess: a nogui build has no window to host.
func windowProcess() (int, bool) { return 0, false }
