package action

import "errors"

// Sentinel errors of package action. Callers test them with errors.Is.
var (
	// ErrInvalidSpec: New was given a spec whose Validate reports problems.
	ErrInvalidSpec = errors.New("invalid action")
	// ErrUnknownSpec: New was given a value that is not one of the *Spec types.
	ErrUnknownSpec = errors.New("unknown action spec type")
	// ErrMissingDep: New was given a spec whose action needs a Deps field that is nil
	// (watch needs Snapshots, notify needs Notifier).
	ErrMissingDep = errors.New("missing action dependency")
)
