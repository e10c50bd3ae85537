//go:build linux

package main

import (
	"fmt"
	"time"

	"github.com/routinely/routinely/internal/torture"
)

// Recovery measures SIGKILL of the owner → a standing-by daemon owns, with the real binary, at
// two instants: when the standby locked the guard (the log's locked_mono_ns: from then on no
// other process can own) and when it owns in full (mono_ns: the epoch stored durably and the
// record written, just before any run can be admitted). Trials chain: the standby that took over
// becomes the next trial's owner. The baseline (baselineTrial) is a bare blocking flock waiter in
// the standby's place, on a second home, its trials alternating with the standby's.
func Recovery(bin, root string, trials int) (locked, owns Figure) {
	locked = Figure{Name: "crash recovery, SIGKILL → standby holds the guard", Unit: "ms", Goal: "p99 ≤ 5 ms, ratio ≤ 1.2",
		Met: func(f Figure) bool { return f.Value.P99 <= 5 && f.Ratio() <= 1.2 }}
	owns = Figure{Name: "crash recovery, SIGKILL → standby owns (epoch durable, record written)", Unit: "ms", Goal: "p99 ≤ 60 ms",
		Met: func(f Figure) bool { return f.Value.P99 <= 60 }}
	fail := func(err error) (Figure, Figure) { return locked.failed(err), owns.failed(err) }
	h, err := NewHome(bin, root, "recovery", hourly(1))
	if err != nil {
		return fail(err)
	}
	defer h.Close()
	bh, err := NewHome(bin, root, "recovery-baseline", hourly(1))
	if err != nil {
		return fail(err)
	}
	defer bh.Close()
	owner, err := h.StartOwner()
	if err != nil {
		return fail(err)
	}
	var lockMS, ownMS, base []float64
	for i := 0; i < trials; i++ {
		b, err := baselineTrial(bh)
		if err != nil {
			return fail(fmt.Errorf("baseline: %w", err))
		}
		base = append(base, b)
		standby, err := h.Daemon("--wait")
		if err == nil {
			err = WaitLog(standby, "Standing by", 10*time.Second)
		}
		if err != nil {
			return fail(err)
		}
		settle() // blocked on the guard by now
		t0 := monoNow()
		owner.Kill()
		// Both figures come from the standby's own log stamps, so the bench need not watch
		// for them as they happen: it stays blocked while the kernel ends the owner and wakes
		// the standby, as it is during a baseline trial (blocked reading the waiter's pipe).
		// Polling the log and owner.json every millisecond here took CPU from the two processes
		// being measured, on two cores, and only in these trials.
		time.Sleep(quietAfterKill)
		at, fromLog, err := h.WaitOwner(standby, 5*time.Second)
		if err == nil && !fromLog {
			err = fmt.Errorf("daemon pid %d logged no ownership mono_ns line", standby.PID())
		}
		var lockedAt int64
		if err == nil {
			lockedAt, err = lockedMono(standby)
		}
		if err != nil {
			return fail(fmt.Errorf("trial %d: %w", i+1, err))
		}
		lockMS = append(lockMS, float64(lockedAt-t0)/1e6)
		ownMS = append(ownMS, float64(at-t0)/1e6)
		owner.WaitExit(time.Second)
		owner = standby
	}
	bs := Summarize(base)
	locked.Value, locked.Baseline = Summarize(lockMS), &bs
	owns.Value = Summarize(ownMS)
	return locked, owns
}

// quietAfterKill is how long Recovery stays blocked after the SIGKILL before it looks for the
// standby's log line: longer than a standby takes to own (p99 18 ms in the README's table), so
// the look almost never overlaps the work being timed; a slower trial is still timed right.
const quietAfterKill = 50 * time.Millisecond

// lockedMono returns locked_mono_ns of p's last "ownership acquired" log line, or an error when
// it has none.
func lockedMono(p *torture.Proc) (int64, error) {
	evs, _ := torture.ParseEvents(p.LogPath)
	if n := len(evs); n > 0 && evs[n-1].Acquired && evs[n-1].LockedMono != 0 {
		return evs[n-1].LockedMono, nil
	}
	return 0, fmt.Errorf("daemon pid %d logged no locked_mono_ns", p.PID())
}
