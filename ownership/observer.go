package ownership

import (
	"sync"
	"time"
)

// Observer watches one state directory over time for the desktop app's owner panel and for
// kill-wedged. Unlike Inspect, it judges "not-heartbeating" and "stalled" on its own monotonic
// clock (time since it last saw the record change), so a wall-clock step or a skewed owner clock
// cannot fake or hide a wedge. Like Inspect it never takes the guard. Safe for concurrent use.
type Observer struct {
	dir string
	now func() time.Time // returns monotonic readings; injectable for tests

	mu          sync.Mutex
	token       string
	heartbeatAt time.Time
	changedAt   time.Time // observer time when the heartbeat last changed
	progress    uint64
	progressAt  time.Time // observer time when the progress counter last changed
}

// NewObserver returns an Observer of the state directory dir (as returned by StateDir).
func NewObserver(dir string) *Observer {
	return &Observer{dir: dir, now: time.Now}
}

// Observe looks once and returns the status with the diagnoses that apply now. On its first look
// at an owner (no history yet) it judges staleness like Inspect, from the record's wall-clock
// times. It returns the errors of Inspect.
func (o *Observer) Observe() (Status, error) {
	f, err := look(o.dir)
	if err != nil {
		return f.status, err
	}
	o.track(&f)
	f.status.Diagnoses = diagnose(f)
	return f.status, nil
}

// unchangedFor returns how long (observer monotonic time) the record's heartbeat has not changed,
// as of the last Observe; 0 when there is no record or no history.
func (o *Observer) unchangedFor() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.changedAt.IsZero() {
		return 0
	}
	return o.now().Sub(o.changedAt)
}

// track updates the observer's history with what f saw and fills in f's time-based facts: stale
// when the heartbeat has not changed for staleBeats intervals of observer time, stalled when
// work is overdue and the progress counter has not moved for stallGrace of observer time.
func (o *Observer) track(f *facts) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	r := f.status.Record
	if r == nil {
		o.token, o.changedAt = "", time.Time{}
		return
	}
	first := o.token != r.Token
	if first || !r.HeartbeatAt.Equal(o.heartbeatAt) {
		o.token, o.heartbeatAt, o.changedAt = r.Token, r.HeartbeatAt, now
	}
	if first || r.Progress != o.progress {
		o.progress, o.progressAt = r.Progress, now
	}
	if first {
		f.judgeByWallClock()
		return
	}
	f.silentFor = now.Sub(o.changedAt)
	f.stale = f.silentFor > staleBeats*heartbeatInterval(r)
	f.stalled = !r.NextDueAt.IsZero() && f.status.ObservedAt.After(r.NextDueAt.Add(stallGrace)) &&
		now.Sub(o.progressAt) > stallGrace
}
