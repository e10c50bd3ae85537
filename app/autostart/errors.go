package autostart

import "errors"

// Sentinel errors; every error returned by this package wraps one of them or an *os.PathError.
var (
	// ErrUnsupported: this operating system has no login-item implementation.
	ErrUnsupported = errors.New("autostart: not supported on this operating system")
	// ErrExecutable: the executable to start cannot be resolved (missing, not a file).
	ErrExecutable = errors.New("autostart: cannot resolve the executable")
	// ErrUnrepresentable: the executable path cannot be written into the entry exactly
	// (a NUL byte anywhere, a double quote in a Windows command line).
	ErrUnrepresentable = errors.New("autostart: path cannot be represented in the login item")
	// ErrMalformed: an existing entry could not be read (bad syntax); enable rewrites it.
	ErrMalformed = errors.New("autostart: malformed login item")
)
