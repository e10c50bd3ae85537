package ownership

import "time"

// DiagnosisKind names one way an owner can look unhealthy (DESIGN.md §3 "Wedged owner").
type DiagnosisKind string

// Diagnosis kinds, as printed by `routinely status` and shown in the app's banner.
const (
	DiagNotHeartbeating  DiagnosisKind = "not-heartbeating"
	DiagStalled          DiagnosisKind = "stalled"
	DiagLockHeldByOther  DiagnosisKind = "lock-held-by-other"
	DiagDraining         DiagnosisKind = "draining"
	DiagGuardReplaced    DiagnosisKind = "guard-replaced"
	DiagRecordUnreadable DiagnosisKind = "record-unreadable"
)

// Diagnosis is one finding about the owner, with a sentence a person can act on.
type Diagnosis struct {
	Kind    DiagnosisKind `json:"kind"`
	Message string        `json:"message"`
	Since   time.Time     `json:"since,omitempty"`
}

// Status is what an observer knows about ownership of a state directory at one instant.
type Status struct {
	// Held reports whether the guard is locked by some process (the only authority).
	Held bool `json:"held"`
	// Record is owner.json as read (nil when missing or unreadable).
	Record *Record `json:"record,omitempty"`
	// Alive: the recorded pid exists and its start time matches (EPERM counts as alive).
	Alive bool `json:"alive"`
	// HolderPID is the process that really holds the guard when known (Linux /proc/locks), else 0.
	HolderPID      int           `json:"holder_pid,omitempty"`
	HeartbeatAge   time.Duration `json:"heartbeat_age_ns"`
	Diagnoses      []Diagnosis   `json:"diagnoses"`
	ObservedAt     time.Time     `json:"observed_at"`
	PendingRequest *Request      `json:"pending_request,omitempty"`
}

// Healthy reports whether an owner holds the guard and no diagnosis was made.
func (s Status) Healthy() bool { return s.Held && len(s.Diagnoses) == 0 }
