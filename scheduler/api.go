package scheduler

// The interfaces and types app/cli, app/owning and app/desktop use.

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
