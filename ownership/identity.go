package ownership

import (
	"os"
	"sync"

	"github.com/shirou/gopsutil/v4/process"
)

// procIdentity names one process across pid reuse: pid plus its start time.
type procIdentity struct {
	PID        int
	StartMS    int64  // create time, ms since the Unix epoch (gopsutil)
	StartTicks uint64 // Linux: raw start ticks since boot; 0 elsewhere
}

// startToleranceMS absorbs the rounding of create times derived from boot time plus ticks
// (gopsutil on Linux) where raw ticks are not available to compare.
const startToleranceMS = 1500

var (
	selfOnce sync.Once
	selfID   procIdentity
)

// selfHost is this machine's host name (computed once; "" when it cannot be read). It is kept
// apart from self: an observer (status) needs only the host, and reading this process's start
// time through gopsutil cost it about 1.5 ms.
var selfHost = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return h
})

// self returns this process's identity and host name (computed once).
func self() (procIdentity, string) {
	selfOnce.Do(func() {
		selfID, _ = identify(os.Getpid())
		selfID.PID = os.Getpid()
	})
	return selfID, selfHost()
}

// identify reads pid's start time. It returns an error when the process does not exist or its
// start time cannot be read.
func identify(pid int) (procIdentity, error) {
	id := procIdentity{PID: pid}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return id, err
	}
	if id.StartMS, err = p.CreateTime(); err != nil {
		return id, err
	}
	id.StartTicks, _ = startTicks(pid)
	return id, nil
}

// sameProcess reports whether a running process is the one identified by want (checkProcess).
// A process that exists but whose start time cannot be read (another user's, on some systems)
// counts as alive: that is the EPERM rule (kill(2); docs/design.md#37-liveness).
func sameProcess(want procIdentity) bool {
	s := checkProcess(want)
	return s == ProcessRunning || s == ProcessUnverified
}

// checkProcess compares want with the process that has want.PID now: same start when both
// sides have raw ticks and they are equal, else when the create times are within
// startToleranceMS.
func checkProcess(want procIdentity) ProcessState {
	if want.PID <= 0 || !pidExists(want.PID) {
		return ProcessGone
	}
	if want.StartTicks != 0 {
		if ticks, err := startTicks(want.PID); err == nil {
			return sameIf(ticks == want.StartTicks)
		}
	}
	got, err := identify(want.PID)
	if err != nil {
		if pidExists(want.PID) {
			return ProcessUnverified
		}
		return ProcessGone
	}
	d := got.StartMS - want.StartMS
	return sameIf(d <= startToleranceMS && d >= -startToleranceMS)
}

func sameIf(same bool) ProcessState {
	if same {
		return ProcessRunning
	}
	return ProcessReplaced
}

// recordIdentity is the identity of the process an owner record names.
func recordIdentity(r *Record) procIdentity {
	return procIdentity{PID: r.PID, StartMS: r.PIDStartMS, StartTicks: r.PIDStartTicks}
}

// requesterIdentity is the identity of the process that wrote a takeover request.
func requesterIdentity(r Requester) procIdentity {
	return procIdentity{PID: r.PID, StartMS: r.PIDStartMS, StartTicks: r.PIDStartTicks}
}

// sameStart reports whether a and b name the same process: same pid and start time (exact raw
// ticks when both have them, else create times within startToleranceMS), as sameProcess judges
// a running process against a recorded identity. It compares two recorded identities and asks
// the OS nothing.
func sameStart(a, b procIdentity) bool {
	if a.PID != b.PID || a.PID <= 0 {
		return false
	}
	if a.StartTicks != 0 && b.StartTicks != 0 {
		return a.StartTicks == b.StartTicks
	}
	d := a.StartMS - b.StartMS
	return d <= startToleranceMS && d >= -startToleranceMS
}
