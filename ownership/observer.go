package ownership

import (
	"sync"
	"time"
)

// Observer watches one state directory over time for the desktop app's owner panel and for
// kill-wedged. Unlike Inspect, it judges "not-heartbeating" and "stalled" on its own monotonic
// clock (time since it last saw the record change), so a wall-clock step or a skewed owner clock
// cannot fake or hide a wedge. It never touches the guard. Safe for concurrent use.
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
// (no history yet) it judges staleness like Inspect, from the record's wall-clock times. It
// returns the errors of Inspect.
func (o *Observer) Observe() (Status, error) {
	st, err := inspect(o.dir, time.Now())
	if err != nil {
		return st, err
	}
	st.Diagnoses = diagnose(o.track(st))
	return st, nil
}

// unchangedFor returns how long (observer monotonic time) the record's heartbeat has not changed,
// as of the last Observe.
func (o *Observer) unchangedFor() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.changedAt.IsZero() {
		return 0
	}
	return o.now().Sub(o.changedAt)
}

// track updates the observer's history with st and returns the facts to diagnose.
func (o *Observer) track(st Status) facts {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	f := facts{status: st}
	r := st.Record
	if r == nil {
		o.token, o.changedAt = "", time.Time{}
		return f
	}
	first := o.token != r.Token
	if first || !r.HeartbeatAt.Equal(o.heartbeatAt) {
		o.token, o.heartbeatAt, o.changedAt = r.Token, r.HeartbeatAt, now
	}
	if first || r.Progress != o.progress {
		o.progress, o.progressAt = r.Progress, now
	}
	iv := time.Duration(r.HeartbeatIntervalMS) * time.Millisecond
	if iv <= 0 {
		iv = DefaultHeartbeat
	}
	if first {
		// No history: fall back to the wall-clock judgement of Inspect for this look.
		f.silentFor = st.HeartbeatAge
		f.stale = st.HeartbeatAge > staleBeats*iv
		f.stalled = !r.NextDueAt.IsZero() && st.ObservedAt.Sub(r.NextDueAt) > stallGrace
		return f
	}
	f.silentFor = now.Sub(o.changedAt)
	f.stale = f.silentFor > staleBeats*iv
	f.stalled = !r.NextDueAt.IsZero() && st.ObservedAt.After(r.NextDueAt.Add(stallGrace)) &&
		now.Sub(o.progressAt) > stallGrace
	return f
}
