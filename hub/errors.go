package hub

import "errors"

// Errors of this package; test them with errors.Is.
var (
	// ErrNameTaken: another device that is live on the hub already uses this device's name
	// (Options.Device) under another id (Start). The name is only a label, so the two would not
	// take each other's runs, but every history and status line naming that device would be
	// ambiguous: the second device is refused until it is renamed ([hub] device).
	ErrNameTaken = errors.New("device name taken")
	// ErrDeviceID: the state directory's device id file (IDFile) exists but cannot be used (not
	// a regular file, too large, not a device id) (LoadID).
	ErrDeviceID = errors.New("device id file is not usable")
)
