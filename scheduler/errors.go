package scheduler

import "errors"

// The scheduler's own sentinels: causes and conditions that never leave the package unwrapped.
// The sentinels callers test with errors.Is are package journal's (ErrFenced, ErrSlotClaimed,
// ErrNoRun, ErrReadOnly, ErrNotJournal) and package config's (ErrConfig, ErrUnknownRoutine).
var (
	errEngineOptions = errors.New("scheduler: NewEngine needs a Journal and a Gate")
	errNotAdmitting  = errors.New("not admitting runs: not the owner or yielding")
	errReplaced      = errors.New("replaced by a newer slot (overlap = replace)") // cancel cause
	errRunTimeout    = errors.New("routine timeout reached")                      // cancel cause
)

// ErrHubUnreachable is wrapped by a Coordinator's Claim when the hub cannot decide (not
// connected, or it did not answer in time): a shared routine's slot then does not run on this
// device, unless [hub] offline = "local" (docs/design.md#94-fail-closed).
var ErrHubUnreachable = errors.New("hub unreachable")
