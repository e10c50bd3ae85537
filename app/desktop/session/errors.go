package session

import "errors"

// Sentinel errors of the session's actions; callers test them with errors.Is.
var (
	// ErrNotStandingBy: the action needs another process to own (this app standing by).
	ErrNotStandingBy = errors.New("this app is not standing by for another owner")
	// ErrNotStuck: the owner is not one that may be ended from the window now (it heartbeats,
	// has not been silent long enough, is another process than the one named, or may not be
	// ended from here at all).
	ErrNotStuck = errors.New("the owner is not a stuck owner that may be ended now")
)
