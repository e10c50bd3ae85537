package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/config"
)

// Exit codes of every routinely command. They follow sysexits.h where one fits, so scripts and
// service managers can tell "try again later" (75) from "fix your config" (78).
const (
	ExitOK         = 0  // success; for status: a healthy owner
	ExitError      = 1  // any other failure (a run that failed, an I/O error)
	ExitUsage      = 2  // bad flags or arguments
	ExitNoOwner    = 3  // status: nobody owns the routines
	ExitUnhealthy  = 4  // status: an owner holds the guard but looks wedged, stalled, draining or cannot write its journal
	ExitTempFail   = 75 // owned by another process, takeover denied or timed out (EX_TEMPFAIL)
	ExitPermission = 77 // the state directory is unsafe or not accessible (EX_NOPERM)
	ExitConfig     = 78 // routines.toml does not parse or has invalid routines, or its [hub] device name is taken (EX_CONFIG)
)

// exitCodesHelp is appended to every command's help so the codes are one `--help` away.
const exitCodesHelp = `Exit codes:
  0   success (status: a healthy owner)
  1   failure (I/O error, unknown routine or run id, a run that did not succeed)
  2   usage error (bad flag or argument)
  3   status: no owner
  4   status: owner present but unhealthy (not heartbeating, stalled, draining, journal-unwritable)
  75  owned by another process; takeover denied or timed out; run with no owner
  77  permission: the state directory is unsafe or not accessible
  78  configuration: routines.toml is missing, does not parse or has invalid routines (file:line:col);
      routines: also while it lists the last good version of a file that does not parse;
      daemon: also when another device on the hub uses this device's name ([hub] device)`

// exitError carries an exit code with the error that caused it. A nil err with a code means
// "exit with code, the command already printed what it had to say".
type exitError struct {
	code int
	err  error
}

// Error is the cause's text, or "exit status N" when there is none.
func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// Unwrap returns the cause (nil when the command already printed everything).
func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err (which may be nil) so Execute exits with code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// exitCodeFor maps an error returned by a command to its exit code: an explicit exitError wins,
// then the sentinel errors of errors.go, ownership and scheduler, then permission errors; anything
// else is 1.
func exitCodeFor(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errUsage):
		return ExitUsage
	case errors.Is(err, ownership.ErrTakenByOther), errors.Is(err, ownership.ErrStillDraining):
		return ExitTempFail // kill-wedged: a standby won the guard, or the owner resumed to drain
	case errors.Is(err, ownership.ErrOwned), errors.Is(err, ownership.ErrDenied),
		errors.Is(err, ownership.ErrTakeoverTimeout), errors.Is(err, ownership.ErrNotWedged),
		errors.Is(err, errNoOwner), errors.Is(err, ownership.ErrEpochFloorUnavailable):
		return ExitTempFail
	case errors.Is(err, ownership.ErrUnsafeDir), errors.Is(err, os.ErrPermission):
		return ExitPermission
	case errors.Is(err, config.ErrConfig), errors.Is(err, errNoConfig), errors.Is(err, hub.ErrNameTaken):
		return ExitConfig
	default:
		return ExitError
	}
}
