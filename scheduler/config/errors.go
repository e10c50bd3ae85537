package config

import "errors"

// ErrConfig: routines.toml cannot be used as a whole (it does not parse, or cannot be read).
// Callers test it with errors.Is; the *ConfigError that wraps it says where and why.
var ErrConfig = errors.New("invalid routines file")

// ErrUnknownRoutine: no routine of that name in the current configuration.
var ErrUnknownRoutine = errors.New("no such routine")

// Causes a *ConfigError wraps besides ErrConfig (a read or parse error otherwise).
var (
	errIsDir      = errors.New("is a directory")
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("routines file too large")
	errTooDeep    = errors.New("routines file nested too deep")
	errTooWide    = errors.New("routines file has a table too large")
)

// ErrHubCA is returned by Hub.ReadCA when [hub] ca_file cannot be used: outside routines.toml's
// directory, missing, not a regular file, changeable by other users, or without a certificate.
var ErrHubCA = errors.New("hub ca_file not usable")

// ErrHubCreds is returned by Hub.ReadCredentials when [hub] credentials_file cannot be read as
// a secret: missing, outside routines.toml's directory, not a regular file, another user's,
// open to others, too large.
var ErrHubCreds = errors.New("hub credentials_file not usable")
