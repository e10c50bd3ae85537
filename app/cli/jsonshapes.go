package cli

import (
	"time"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// The --json shapes. They are the CLI's stable interface for scripts and are documented in the
// README: fields may be added, never renamed or removed. Durations are whole milliseconds
// (suffix _ms), times RFC 3339 with zone, absent values null.

// jsonRun is one run (history --json, run --json, and "last" in jsonRoutine).
type jsonRun struct {
	ID          int64      `json:"id"`
	Routine     string     `json:"routine"`
	Slot        time.Time  `json:"slot"`
	Trigger     string     `json:"trigger"`
	Epoch       uint64     `json:"epoch"`
	Outcome     string     `json:"outcome"`
	Reason      string     `json:"reason"`
	Started     *time.Time `json:"started"`
	Finished    *time.Time `json:"finished"`
	LateByMS    int64      `json:"late_by_ms"`
	DurationMS  int64      `json:"duration_ms"`
	ExitCode    *int       `json:"exit_code"`
	Attempts    int        `json:"attempts"`
	OutputBytes int        `json:"output_bytes"`
	Device      string     `json:"device,omitempty"` // with a hub: the device that claimed the slot; absent without
}

// toJSONRun converts a journal run to its JSON shape; nil stays nil (null).
func toJSONRun(r *journal.Run) *jsonRun {
	if r == nil {
		return nil
	}
	return &jsonRun{
		ID: r.ID, Routine: r.Routine, Slot: r.Slot, Trigger: r.Trigger, Epoch: r.Epoch,
		Outcome: r.Outcome, Reason: r.Reason, Started: r.Started, Finished: r.Finished,
		LateByMS: ms(r.LateBy), DurationMS: ms(r.Duration), ExitCode: r.ExitCode,
		Attempts: r.Attempts, OutputBytes: r.OutputSize, Device: r.Device,
	}
}

// jsonRoutine is one routine (routines --json and "routines" in status --json).
type jsonRoutine struct {
	Name       string     `json:"name"`
	Schedule   string     `json:"schedule"`
	Action     string     `json:"action"`
	Timezone   string     `json:"timezone"`
	Next       *time.Time `json:"next"`
	Overdue    *time.Time `json:"overdue"` // the oldest past slot nobody has handled (null when none)
	Paused     bool       `json:"paused"`
	PauseNote  string     `json:"pause_note"`
	PauseUntil *time.Time `json:"pause_until"`
	Running    bool       `json:"running"`
	Disabled   string     `json:"disabled"`
	Last       *jsonRun   `json:"last"`
}

// toJSONRoutine converts one routine state to its JSON shape.
func toJSONRoutine(s scheduler.RoutineState) jsonRoutine {
	return jsonRoutine{
		Name: s.Name, Schedule: s.Schedule, Action: s.Action, Timezone: s.Timezone, Next: s.Next, Overdue: s.Overdue,
		Paused: s.Paused, PauseNote: s.PauseNote, PauseUntil: s.PauseUntil, Running: s.Running,
		Disabled: s.Disabled, Last: toJSONRun(s.Last),
	}
}

// toJSONRoutines converts states, never returning nil (an empty list prints as []).
func toJSONRoutines(states []scheduler.RoutineState) []jsonRoutine {
	out := make([]jsonRoutine, 0, len(states))
	for _, s := range states {
		out = append(out, toJSONRoutine(s))
	}
	return out
}

// jsonProblem is one routines.toml finding.
type jsonProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Routine string `json:"routine"`
	Message string `json:"message"`
}

// toJSONProblems converts validation problems, never returning nil (an empty list prints as []).
func toJSONProblems(ps []config.Problem) []jsonProblem {
	out := make([]jsonProblem, 0, len(ps))
	for _, p := range ps {
		out = append(out, jsonProblem{File: p.File, Line: p.Line, Col: p.Col, Routine: p.Routine, Message: p.Message})
	}
	return out
}

// jsonOwner is owner.json as `status --json` shows it.
type jsonOwner struct {
	Role        string       `json:"role"`
	PID         int          `json:"pid"`
	Host        string       `json:"host"`
	UID         int          `json:"uid"`
	Version     string       `json:"version"`
	Epoch       uint64       `json:"epoch"`
	State       string       `json:"state"`
	Since       time.Time    `json:"since"`
	HeartbeatAt time.Time    `json:"heartbeat_at"`
	LastTickAt  *time.Time   `json:"last_tick_at"`
	NextDueAt   *time.Time   `json:"next_due_at"`
	InFlight    int          `json:"in_flight"`
	LastJob     *jsonLastJob `json:"last_job"`
}

type jsonLastJob struct {
	Routine  string     `json:"routine"`
	Slot     time.Time  `json:"slot"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished"`
}

// toJSONOwner converts owner.json as read; nil (no record) stays nil (null).
func toJSONOwner(r *ownership.Record) *jsonOwner {
	if r == nil {
		return nil
	}
	o := &jsonOwner{
		Role: string(r.Role), PID: r.PID, Host: r.Host, UID: r.UID, Version: r.Version,
		Epoch: r.Epoch, State: string(r.State), Since: r.AcquiredAt, HeartbeatAt: r.HeartbeatAt,
		LastTickAt: nonZero(r.LastTickAt), NextDueAt: nonZero(r.NextDueAt), InFlight: r.InFlight,
	}
	if j := r.LastJob; j != nil {
		o.LastJob = &jsonLastJob{Routine: j.Routine, Slot: j.Slot, Started: j.Started, Finished: j.Finished}
	}
	return o
}

// nonZero returns &t, or nil for the zero time so JSON prints null.
func nonZero(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// jsonDiagnosis is one wedge finding.
type jsonDiagnosis struct {
	Kind    string     `json:"kind"`
	Message string     `json:"message"`
	Since   *time.Time `json:"since"`
}

// jsonTakeover is a pending takeover request.
type jsonTakeover struct {
	ID            string    `json:"id"`
	RequesterPID  int       `json:"requester_pid"`
	RequesterHost string    `json:"requester_host"`
	RequesterRole string    `json:"requester_role"`
	RequestedAt   time.Time `json:"requested_at"`
	ExpiresAt     time.Time `json:"expires_at"`
	Reason        string    `json:"reason"`
}

// jsonStatus is `routinely status --json`.
type jsonStatus struct {
	Health         string          `json:"health"` // healthy | no-owner | unhealthy
	ExitCode       int             `json:"exit_code"`
	StateDir       string          `json:"state_dir"`
	Config         string          `json:"config"`
	Held           bool            `json:"held"`
	Alive          bool            `json:"alive"`
	HolderPID      int             `json:"holder_pid"`
	HeartbeatAgeMS *int64          `json:"heartbeat_age_ms"`
	Owner          *jsonOwner      `json:"owner"`
	Diagnoses      []jsonDiagnosis `json:"diagnoses"`
	Takeover       *jsonTakeover   `json:"pending_takeover"`
	Routines       []jsonRoutine   `json:"routines"`
	Problems       []jsonProblem   `json:"problems"`
	ConfigError    string          `json:"config_error"`
	// LastGood is set when routines.toml cannot be used and the routines shown are the last good
	// version of it the owner recorded (null otherwise).
	LastGood     *jsonLastGood `json:"last_good_config"`
	JournalError string        `json:"journal_error"` // why the journal could not be read, if so
	Hub          *jsonHub      `json:"hub,omitempty"` // with a [hub]: what the owner sees of it; absent without
	ObservedAt   time.Time     `json:"observed_at"`
}

// jsonLastGood is the last good version of routines.toml shown while the file cannot be used.
type jsonLastGood struct {
	AppliedAt time.Time `json:"applied_at"`
	Epoch     uint64    `json:"epoch"` // the owner that recorded it
	Note      string    `json:"note"`  // what it means, for a person
}

// jsonPreview is `routinely preview --json`.
type jsonPreview struct {
	Routine string      `json:"routine"`
	From    time.Time   `json:"from"`
	Slots   []time.Time `json:"slots"`
}

// jsonValidate is `routinely validate --json`.
type jsonValidate struct {
	File     string        `json:"file"`
	OK       bool          `json:"ok"`
	Routines []string      `json:"routines"`
	Problems []jsonProblem `json:"problems"`
	Error    string        `json:"error"`
}
