package ownership

// ProcessIdentity names one process across pid reuse: its pid plus its start time. The owner
// record uses it for the owning process; the scheduler records it for the leader of each run's
// process group, so that the next owner can end what a crashed owner left running without ever
// signalling a process that merely got the same pid later.
type ProcessIdentity struct {
	PID        int
	StartMS    int64  // create time, ms since the Unix epoch (gopsutil)
	StartTicks uint64 // Linux: start time in clock ticks after boot (proc(5)); 0 elsewhere
}

// ProcessState is what became of an identified process.
type ProcessState int

const (
	// ProcessGone: no process has the pid (a zombie not yet reaped still counts as present).
	ProcessGone ProcessState = iota
	// ProcessRunning: the pid belongs to the same process (same start time).
	ProcessRunning
	// ProcessReplaced: the pid belongs to another process, started at another time (reused).
	ProcessReplaced
	// ProcessUnverified: the pid exists but its start time cannot be read (another user's
	// process on some systems), so whether it is the same process is unknown.
	ProcessUnverified
)

// IdentifyProcess returns the identity of the process pid: its pid and start time. Errors: the
// process does not exist, or its start time cannot be read (gopsutil's error).
func IdentifyProcess(pid int) (ProcessIdentity, error) {
	id, err := identify(pid)
	return ProcessIdentity(id), err
}

// State compares p with the process that has p.PID now: exact raw start ticks when both sides
// have them (Linux), else create times within a 1.5 s tolerance. A zero or negative PID is
// ProcessGone.
func (p ProcessIdentity) State() ProcessState { return checkProcess(procIdentity(p)) }
