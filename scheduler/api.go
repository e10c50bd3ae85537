package scheduler

// CONTRACT FILE: the functions app/cli and app/desktop call. The scheduler implementer fills the
// bodies in files with one job each and deletes the stubs; signatures change only with callers.

import "time"

// Gate is the slice of *ownership.Handle the engine needs (ownership.Handle satisfies it).
type Gate interface {
	Epoch() uint64
	Admitting() bool
	BeginRun(routine string, slot time.Time) (done func(), err error)
	NoteTick(nextDue time.Time)
}

// Config is a validated routines.toml: the valid routines and the problems of the invalid ones.
type Config struct {
	Path     string
	Routines []*Routine
	Problems []Problem
}
