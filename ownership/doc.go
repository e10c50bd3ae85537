// Package ownership decides which single process owns the Routinely schedule
// (docs/design.md#2-state-directory, #3-ownership-protocol). At most one process owns a state directory at any instant; every other one is
// refused, stands by, or asks the owner to step aside.
//
// Terms used throughout:
//
//   - guard: the exclusive OS lock (flock(2) / LockFileEx, via gofrs/flock) on owner.lock. It,
//     and nothing else, decides who owns. The kernel drops it when the owner dies, so no stale
//     lock is ever deleted; the file itself is never written, truncated, renamed or deleted.
//   - owner record: owner.json, written atomically by the owner. Diagnostics only (who, since
//     when, heartbeat, progress, state); readers tolerate it missing or torn.
//   - epoch (fencing token): a number strictly greater for every new owner, stored durably in
//     the file "epoch" before Acquire returns. The scheduler stamps it on every run.
//   - heartbeat: the owner's loop that, every interval (default 2 s), checks the guard is still
//     the file on disk, rewrites the record and looks for takeover requests.
//   - standby: a process in Wait, trying the guard every 20 ms until it is free.
//   - takeover: a challenger writes takeover.json addressed to the owner's token; the owner
//     answers in takeover.reply.json (pending, then approved or denied), and on approval drains
//     its runs in flight and releases the guard, which the challenger then takes. The owner's
//     handle ends only once it has seen the requester own; if nobody takes the guard within 5 s
//     (a forged request, a challenger that hung), it ends with ErrHandoverFailed and its user
//     owns again at a new epoch.
//   - phase: where an owner's Handle is in its life (phase.go). Every change goes through one
//     function, setPhaseLocked, which checks it against the table under "Owner phases" and
//     sets together what the phase decides: whether BeginRun admits, the state owner.json
//     shows, and the phase event (EventYielding, EventReleased, EventGuardReplaced).
//   - wedge diagnosis: what an observer (Inspect, Observer) concludes about an owner that holds
//     the guard but is not heartbeating, is stalled, or is not the process the record names.
//
// # Owner phases
//
// The legal changes (phaseTable in phase.go); anything else is a bug, logged at error, and the
// phase stays. Any phase the heartbeat beats in (owning, asking, yielding, releasing) also goes
// to lost when owner.lock is replaced (ErrGuardReplaced).
//
//	phase         admits  owner.json  left by
//	owning        yes     owning      a valid request → asking; Release → releasing
//	asking        yes     owning      denied or withdrawn → owning; approved → yielding;
//	                                  Release → releasing (the request is still answered)
//	yielding      no      yielding    drained → handing-over; challenger gone → owning;
//	                                  Release → releasing
//	handing-over  no      released    challenger gone at the last check → owning;
//	                                  Release → released; guard let go → lost
//	                                  (ErrReleased once the successor owns, else ErrHandoverFailed)
//	releasing     no      yielding    drained → released
//	released      no      released    guard let go → lost (ErrReleased)
//	lost          no      unchanged   (final: Lost, Events and OnRequest's queue are closed)
//
// Files, one job each:
//
//	api.go           contract types: Options, Event, TakeoverOptions, OwnedError, Policy
//	errors.go        sentinel errors
//	acquire.go       Acquire and Wait: take the guard and become the owner
//	epoch.go         the durable fencing epoch
//	guard*.go        the OS lock on owner.lock and its identity check
//	handle.go        Handle: what the owning process and its scheduler call
//	phase.go         the owner's phase, its transition table and setPhaseLocked
//	heartbeat.go     the owner's heartbeat loop, and the end of ownership (release, guard lost)
//	takeover.go      the challenger's side of the takeover handshake (Takeover)
//	takeover_owner.go  the owner's side: validating, asking about, answering requests
//	watch.go         the file watch that wakes the owner when a request arrives
//	record.go        the on-disk formats (owner record, request, reply)
//	files*.go        atomic writes and tolerant reads of the state files
//	identity.go      process identity (pid + start time) across pid reuse; process.go exports
//	                 it (ProcessIdentity) for the scheduler's record of a run's processes
//	liveness*.go     whether a pid exists; starttime*.go its raw start time (Linux)
//	inspect.go       Inspect: one look at who owns; holder*.go finds the real guard holder
//	diagnosis.go     Status, Diagnosis and the rules that produce diagnoses
//	observer.go      Observer: looks over time, judged on its own monotonic clock
//	killwedged.go    ending a verifiably wedged owner (opt-in); kill*.go the per-OS signals
//	statedir*.go     resolving and vetting the state directory
package ownership
