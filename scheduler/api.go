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
