package cli

import "errors"

// Sentinel errors of the command line (the ownership and scheduler ones live in their packages).
// exitCodeFor in exitcodes.go maps each to its exit code.
var (
	// errUsage: a flag or argument is wrong; exits 2.
	errUsage = errors.New("usage error")
	// errNoOwner: a command that needs the owner (run, without --here) found none; exits 75.
	errNoOwner = errors.New("no process owns the routines")
	// errRunFailed: `routinely run` saw its run end in an outcome other than success; exits 1.
	errRunFailed = errors.New("run did not succeed")
	// errNoConfig: the routines file does not exist; exits 78 like config.ErrConfig.
	errNoConfig = errors.New("no routines file")
)
