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
	// ErrCreds: a device's credentials ([hub] credentials_file) or the hub's signing key
	// (HubKeyFile) cannot be used: not of their form, or the hub's signature over the device
	// does not verify (ParseCreds, LoadHubKey).
	ErrCreds = errors.New("hub credentials are not usable")

	// Causes of a connection the hub refused, which hub.json's Error and `routinely status`
	// then show with what to do, instead of the bare end of the connection (EOF).

	// ErrRefused: the hub refused this device's token or key (NATS "Authorization Violation"):
	// the hub's token changed, or the copy on this device is not the hub's; or the device was
	// removed (remove-device), or its credentials are of another hub key.
	ErrRefused = errors.New("authentication failed: the hub refused this device")
	// ErrUntrusted: the hub's TLS certificate does not chain to [hub] ca_file (or, without it,
	// to the system's roots), or does not name the host in the URL.
	ErrUntrusted = errors.New("this device does not trust the hub's TLS certificate")
	// ErrNoTLS: [hub] ca_file asks for TLS and the hub does not offer it.
	ErrNoTLS = errors.New("the hub does not offer TLS")
)
