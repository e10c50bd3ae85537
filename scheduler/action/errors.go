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
	// ErrURLParse: a URL with user info does not parse; the parser's own cause is left out,
	// since it quotes a piece of the URL (`invalid port ":s3cret" after host`) (urlParseError).
	ErrURLParse = errors.New("not a valid URL")
)
