package ownership

import "time"

// Role says which kind of process owns: the desktop app or a headless daemon.
type Role string

// Roles (owner.json "role").
const (
	RoleDesktop Role = "desktop"
	RoleDaemon  Role = "daemon"
)

// State is the owner's lifecycle state as written in owner.json.
type State string

// States (owner.json "state"). Draining is Yielding with runs still in flight.
const (
	StateOwning   State = "owning"
	StateYielding State = "yielding"
	StateReleased State = "released"
)

// JobInfo describes the owner's most recent run (owner.json "last_job").
type JobInfo struct {
	Routine  string     `json:"routine"`
	Slot     time.Time  `json:"slot"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
}

// Record is owner.json: diagnostics only, written atomically by the owner. It never decides who
// owns; the guard lock does.
type Record struct {
	Token      string `json:"token"`
	Epoch      uint64 `json:"epoch"`
	PID        int    `json:"pid"`
	PIDStartMS int64  `json:"pid_start_ms"` // process create time, ms since the Unix epoch (gopsutil)
	// PIDStartTicks is the raw start time in clock ticks since boot (Linux /proc/PID/stat field
	// 22; 0 elsewhere). Unlike PIDStartMS it does not move when the wall clock is stepped.
	PIDStartTicks uint64    `json:"pid_start_ticks,omitempty"`
	Host          string    `json:"host"`
	UID           int       `json:"uid"`
	Role          Role      `json:"role"`
	Version       string    `json:"version"`
	Command       []string  `json:"command,omitempty"`
	AcquiredAt    time.Time `json:"acquired_at"`
	HeartbeatAt   time.Time `json:"heartbeat_at"`
	// LastTickAt is the last time the scheduler handled a slot (ran, skipped or missed it).
	LastTickAt time.Time `json:"last_tick_at"`
	// Progress counts scheduler ticks; unchanged while work is due means "stalled".
	Progress uint64 `json:"progress"`
	// NextDueAt is the earliest slot the scheduler expects to handle (zero: nothing armed).
	NextDueAt           time.Time `json:"next_due_at"`
	InFlight            int       `json:"in_flight"`
	LastJob             *JobInfo  `json:"last_job,omitempty"`
	HeartbeatIntervalMS int64     `json:"heartbeat_interval_ms"`
	State               State     `json:"state"`
	YieldingSince       time.Time `json:"yielding_since,omitempty"`
	// JournalUnwritable is set while the owner's journal refuses writes (locked by another
	// process, disk full): no run starts then. Nil while the journal is fine.
	JournalUnwritable *JournalTrouble `json:"journal_unwritable,omitempty"`
	// JournalReplaced is set while the journal file the owner has open is no longer the one at
	// its path (deleted or replaced, Handle.WatchJournal): no run starts then. Nil otherwise.
	JournalReplaced *JournalTrouble `json:"journal_replaced,omitempty"`
}

// JournalTrouble says since when, and why, the owner cannot write its journal.
type JournalTrouble struct {
	Since time.Time `json:"since"` // when the first refused (or slow) write began
	Error string    `json:"error"` // the latest reason, as the journal gave it
}

// Requester identifies the process asking for a takeover.
type Requester struct {
	PID        int   `json:"pid"`
	PIDStartMS int64 `json:"pid_start_ms"`
	// PIDStartTicks: as Record.PIDStartTicks.
	PIDStartTicks uint64   `json:"pid_start_ticks,omitempty"`
	Host          string   `json:"host"`
	UID           int      `json:"uid"`
	Role          Role     `json:"role"`
	Command       []string `json:"command"`
}

// Request is takeover.json, written atomically by a challenger.
type Request struct {
	ID          string    `json:"id"`
	TargetToken string    `json:"target_token"`
	Requester   Requester `json:"requester"`
	RequestedAt time.Time `json:"requested_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	Reason      string    `json:"reason,omitempty"`

	// writerUID is the uid owning the takeover.json this request was read from (-1 when
	// unknown), taken from the opened file: the file's owner, not the uid it claims inside,
	// says who wrote it.
	writerUID int
}

// Decision is the owner's answer to a takeover request.
type Decision string

// Decisions (takeover.reply.json "decision"). Pending is written at once so the challenger can
// tell a person that the owner is asking its user.
const (
	DecisionPending  Decision = "pending"
	DecisionApproved Decision = "approved"
	DecisionDenied   Decision = "denied"
)

// Reply is takeover.reply.json, written atomically by the owner.
type Reply struct {
	RequestID string    `json:"request_id"`
	Decision  Decision  `json:"decision"`
	By        string    `json:"by"` // "user" or "policy"
	At        time.Time `json:"at"`
	Reason    string    `json:"reason,omitempty"`
}
