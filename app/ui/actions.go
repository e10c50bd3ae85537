package ui

import (
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// Decider answers a pending takeover request; *ownership.Handle satisfies it.
type Decider interface {
	Decide(requestID string, approve bool) error
}

// Actions are what a person can ask of the app from the window or the tray. The desktop's
// session implements them; none of them may block the UI goroutine for long.
type Actions interface {
	Decider
	RunNow(routine string) error
	SetPaused(routine string, paused bool) error // routine "" means all
	TakeBack()
	// EndStuckOwner ends the stuck owner pid (session.State.Stuck) and makes this app the
	// owner; it returns at once, and the outcome shows in later snapshots.
	EndStuckOwner(pid int) error
	SetStartAtLogin(on bool) error
	SetPolicy(p ownership.Policy) error
	// OpenConfig opens routines.toml with the system's default app; it may wait a few seconds
	// for the opener's answer, so the UI calls it off its goroutine. The error says why
	// nothing opened.
	OpenConfig() error
	ShowWindow()
	Quit()
	History(routine string, limit int) ([]journal.Run, error)
	Output(runID int64) ([]byte, error)
}
