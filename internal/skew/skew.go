// Package skew reads times stamped by another clock: another process's (the owner's heartbeat
// in owner.json, its hub session's hub.json) or another machine's (a device's liveness on the
// hub). The two clocks disagree a little — a stamp written just after this process took its
// `now`, a wall clock stepped by NTP, a device whose clock runs ahead — and a stamp later than
// now is no news: it happened just now. `status` once printed `Heartbeat: -9ms ago`.
package skew

import "time"

// Age returns how long before now the stamp then was: now − then, or 0 when then is after now
// (another clock ran ahead; "just now"). It is never negative.
func Age(then, now time.Time) time.Duration {
	return max(now.Sub(then), 0)
}
