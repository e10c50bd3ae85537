//go:build unix

package ownership

import "golang.org/x/sys/unix"

// monoNow is CLOCK_MONOTONIC in ns: one clock for every process on the machine, unlike the
// per-process monotonic reading inside a time.Time.
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
