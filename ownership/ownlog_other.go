//go:build !unix

package ownership

import "time"

var monoStart = time.Now()

// monoNow is this process's monotonic time in ns (only comparable within the process here;
// the chaos test that compares it across processes runs on Linux).
func monoNow() int64 { return int64(time.Since(monoStart)) }
