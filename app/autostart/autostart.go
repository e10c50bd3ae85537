// Package autostart makes Routinely start at login: an XDG autostart entry on Linux, a
// LaunchAgent on macOS, a Run registry value on Windows.
package autostart

// CONTRACT FILE (owned by the autostart implementer; app/cli and app/desktop call it).

import "errors"

var errTODO = errors.New("autostart: not implemented yet")

// AppID is the reverse-DNS application id, identical to FyneApp.toml [Details] ID.
const AppID = "io.routinely.app"

// State is the login-item state shown by `routinely autostart status`.
type State string

// States.
const (
	Enabled        State = "enabled"
	Disabled       State = "disabled"
	DisabledByUser State = "disabled-by-user"
	Unsupported    State = "unsupported"
)

// Status describes the login item.
type Status struct {
	State      State  `json:"state"`
	Location   string `json:"location"`    // entry file path or registry key
	Target     string `json:"target"`      // executable the entry starts ("" when none)
	PointsHere bool   `json:"points_here"` // Target is the running binary
}

// Enable installs or rewrites the login item so it starts exe with --background.
func Enable(exe string) (Status, error) { return Status{}, errTODO }

// Disable removes the login item (idempotent).
func Disable() (Status, error) { return Status{}, errTODO }

// Current reports the login item's state relative to exe.
func Current(exe string) (Status, error) { return Status{}, errTODO }
