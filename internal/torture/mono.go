//go:build linux

package torture

import (
	"time"

	"golang.org/x/sys/unix"
)

// MonoNow reads CLOCK_MONOTONIC in nanoseconds. Unlike the monotonic reading inside a
// time.Time (relative to each process's start), this clock is the same in every process on the
// machine, so timestamps logged by different daemons can be compared with the harness's own.
func MonoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// Clock converts between wall time and CLOCK_MONOTONIC using an offset sampled once; the
// conversion is good to well under a millisecond unless the wall clock is stepped mid-run.
type Clock struct{ offset int64 } // wall ns - mono ns

// NewClock samples the offset between the wall clock and CLOCK_MONOTONIC.
func NewClock() Clock {
	m := MonoNow()
	w := time.Now().UnixNano()
	return Clock{offset: w - m}
}

// ToMono converts a wall-clock instant to CLOCK_MONOTONIC nanoseconds.
func (c Clock) ToMono(t time.Time) int64 { return t.UnixNano() - c.offset }

// ToWall converts CLOCK_MONOTONIC nanoseconds to a wall-clock instant.
func (c Clock) ToWall(mono int64) time.Time { return time.Unix(0, mono+c.offset) }

// Drift reports how far the wall clock has moved relative to the monotonic one since c was made
// (a stepped clock makes wall/mono conversions, and so some checks, unreliable).
func (c Clock) Drift() time.Duration {
	return time.Duration(NewClock().offset - c.offset)
}
