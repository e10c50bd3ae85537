package hub

import "errors"

// Causes of a connection the hub refused, which hub.json's Error and `routinely status` then
// show with what to do, instead of the bare end of the connection (EOF). Test with errors.Is.
var (
	// ErrRefused: the hub refused this device's token (NATS "Authorization Violation"): the
	// hub's token changed, or the copy on this device is not the hub's.
	ErrRefused = errors.New("authentication failed: the hub refused this device's token")
	// ErrUntrusted: the hub's TLS certificate does not chain to [hub] ca_file (or, without it,
	// to the system's roots), or does not name the host in the URL.
	ErrUntrusted = errors.New("this device does not trust the hub's TLS certificate")
	// ErrNoTLS: [hub] ca_file asks for TLS and the hub does not offer it.
	ErrNoTLS = errors.New("the hub does not offer TLS")
)
