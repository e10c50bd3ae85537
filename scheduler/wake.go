package scheduler

import (
	"time"
)

// WallMonoClock reads the wall clock and a monotonic clock separately. Go timers count
// monotonic time, which stops during suspend on Linux and macOS; comparing the two reveals a
// wake (wall ran ahead) or a clock step (wall moved either way).
type WallMonoClock interface {
	Wall() time.Time        // wall-clock now, without a monotonic reading
	Mono() time.Duration    // monotonic time since an arbitrary origin
	Tick() <-chan time.Time // when to compare next (the watcher period)
	Stop()                  // releases the ticker
}

// realWallMono is the OS clocks.
type realWallMono struct {
	base time.Time
	t    *time.Ticker
}

func (c realWallMono) Wall() time.Time        { return time.Now().Round(0) }
func (c realWallMono) Mono() time.Duration    { return time.Since(c.base) }
func (c realWallMono) Tick() <-chan time.Time { return c.t.C }
func (c realWallMono) Stop()                  { c.t.Stop() }

// wakeThreshold is how far wall and monotonic elapsed time may differ before it is a jump
// (a step of more than 2 s either way; docs/design.md#56-wake-and-clock-jump-detection).
const wakeThreshold = 2 * time.Second

// jumpDetector compares successive wall/monotonic readings.
type jumpDetector struct {
	wall time.Time
	mono time.Duration
}

// observe takes a reading and returns how far the wall clock moved beyond the monotonic clock
// since the previous one, and whether that is a jump (|skew| > wakeThreshold).
func (d *jumpDetector) observe(wall time.Time, mono time.Duration) (skew time.Duration, jumped bool) {
	if d.wall.IsZero() {
		d.wall, d.mono = wall, mono
		return 0, false
	}
	skew = wall.Sub(d.wall) - (mono - d.mono)
	d.wall, d.mono = wall, mono
	return skew, skew > wakeThreshold || skew < -wakeThreshold
}

// watchWake compares wall and monotonic time every wakeEvery (≤ 15 s) and, on a wake or clock
// jump, re-arms every routine to its correct wall time and runs the catch-up pass. Runs in
// flight are not cancelled: re-arming replaces gocron jobs, not runs. A backward jump never
// re-fires a claimed slot (the journal refuses the claim). Each tick also re-reads the system
// time zone (checkZone, zonewatch.go).
func (e *Engine) watchWake(stop <-chan struct{}) {
	c := e.opts.WakeClock
	if rc, ok := c.(realWallMono); ok {
		rc.t = time.NewTicker(e.wakeEvery)
		c = rc
	}
	defer c.Stop()
	var d jumpDetector
	d.observe(c.Wall(), c.Mono())
	for {
		select {
		case <-stop:
			return
		case <-c.Tick():
			if skew, jumped := d.observe(c.Wall(), c.Mono()); jumped {
				e.log.Info("wake or clock jump detected; re-arming and catching up", "skew", skew)
				e.onWake()
			}
			// The same tick re-reads the system time zone: a cheap link read, and no
			// watcher of /etc that would wake for every unrelated file there.
			e.checkZone()
		}
	}
}

// onWake repairs the schedule after a wake or clock jump.
func (e *Engine) onWake() {
	e.rearmAll()
	e.catchUpAll("wake or clock jump")
}
