// Package autostart makes Routinely start at login: an XDG autostart entry on Linux, a
// LaunchAgent on macOS, a Run registry value on Windows.
package autostart

// The rule about the user's choice: Enable is only ever called for an explicit act of the user
// (`routinely autostart enable`, ticking "Start at login"). It rewrites our own entry, which
// clears a Hidden=true / X-GNOME-Autostart-enabled=false / Disabled=true the user put in it,
// because ticking the box again is the user changing their mind. It never touches the operating
// system's own switch (Windows' StartupApproved, macOS' `launchctl disable`): only the user turns
// that back on in the system settings, and Status keeps saying DisabledByUser until they do.
// The app itself calls only Refresh, which follows a moved binary but never re-enables.

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
	Location   string `json:"location"`       // entry file path or registry key
	Target     string `json:"target"`         // executable the entry starts ("" when none)
	Home       string `json:"home,omitempty"` // the profile it starts (--home), "" for the default
	PointsHere bool   `json:"points_here"`    // Target is the running binary, on the same profile
}

// Enable installs or rewrites the login item so it starts exe with --background.
// Call it only for an explicit act of the user (see the rule above).
func Enable(exe string) (Status, error) { return Default().Enable(exe) }

// Disable removes the login item (idempotent).
func Disable() (Status, error) { return Default().Disable() }

// Current reports the login item's state relative to exe.
func Current(exe string) (Status, error) { return Default().Current(exe) }

// Refresh points an enabled login item at exe when the binary moved; it leaves a disabled or
// user-disabled item alone. This is the only call the app makes on its own (e.g. at start-up).
func Refresh(exe string) (Status, error) { return Default().Refresh(exe) }
