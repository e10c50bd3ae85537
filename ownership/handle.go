package ownership

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/routinely/routinely/internal/skew"
)

// eventBuffer bounds Handle.Events and the queue of requests for Options.OnRequest: when a
// consumer falls this far behind, further items are dropped (and logged) rather than blocking
// the heartbeat.
const eventBuffer = 64

// Handle is held by the owning process for as long as it owns. Its methods are safe for
// concurrent use and never block on I/O: they change in-memory state and nudge the heartbeat
// loop (heartbeat.go), the one goroutine that writes owner.json and takeover.reply.json, answers
// takeover requests (takeover_owner.go) and finally releases the guard.
type Handle struct {
	dir      string
	opts     Options
	log      *slog.Logger
	guard    *guard
	token    string
	epoch    uint64
	interval time.Duration

	mu       sync.Mutex
	phase    phase  // owning, asking, yielding…: changed only by setPhaseLocked (phase.go)
	rec      Record // owner.json as the next write will put it
	inFlight int
	idle     chan struct{} // closed while inFlight == 0

	// writtenState is rec.State as last handed to writeRecord: the heartbeat loop writes a
	// changed state at once rather than at the next beat.
	writtenState State

	// Takeover requests. policy answers the next one (Options.Policy until SetPolicy). pending
	// and yieldFor are written only by the heartbeat loop (and
	// cleared by setPhaseLocked).
	policy   Policy
	pending  *Request        // valid request awaiting a decision (Decide or the policy)
	decided  *Reply          // the decision, for the loop to apply
	yieldFor *Request        // approved request being drained or handed over for; else nil
	denied   map[string]bool // request ids already denied, not asked about again
	asks     chan Request    // requests for the OnRequest goroutine (nil without OnRequest)

	// journalCheck is called by each heartbeat (WatchJournal; nil: none); journalGone is closed
	// when it fails, and rec.JournalReplaced then stops admission until JournalRestored.
	journalCheck func() error
	journalGone  chan struct{}

	events   chan Event
	lostErr  error // set by setPhaseLocked on the change to phaseLost
	lost     chan struct{}
	wake     chan struct{} // nudges the heartbeat loop (capacity 1)
	loopDone chan struct{} // closed when the heartbeat loop has returned
}

// Epoch returns this owner's fencing epoch: strictly greater than every earlier owner's of this
// state directory, and already durable on disk. The scheduler stamps it on every run.
func (h *Handle) Epoch() uint64 { return h.epoch }

// Token returns this owner's random token (takeover requests are addressed to it).
func (h *Handle) Token() string { return h.token }

// Record returns a copy of the owner record as last written (or about to be written by the next
// heartbeat).
func (h *Handle) Record() Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.recordLocked()
}

// Status returns what an Observer would see of this owner now, built from memory: Held, the
// record as the heartbeat loop keeps it (Record), this process as the guard's holder, the
// takeover request awaiting this owner's decision (Pending), and the diagnoses the record supports, judged by the same rule an
// observer's first look uses (diagnose, judgeByWallClock). It reads no file, so a process that
// owns can show itself every second for nothing (the desktop app's tray and window); another
// process must Observe. Once the handle is lost (Lost is closed) it says nothing true about
// the guard: ask an Observer then.
func (h *Handle) Status() Status {
	now := time.Now()
	h.mu.Lock()
	rec := h.recordLocked()
	h.mu.Unlock()
	st := Status{
		Held: true, Record: &rec, Alive: true, HolderPID: rec.PID, HeartbeatAge: skew.Age(rec.HeartbeatAt, now),
		ObservedAt: now, PendingRequest: h.Pending(),
	}
	f := facts{status: st}
	f.judgeByWallClock()
	st.Diagnoses = diagnose(f)
	return st
}

// recordLocked returns a deep copy of the record (LastJob is shared with endRun). Callers hold
// h.mu.
func (h *Handle) recordLocked() Record {
	r := h.rec
	if r.LastJob != nil {
		j := *r.LastJob
		r.LastJob = &j
	}
	if r.JournalUnwritable != nil {
		t := *r.JournalUnwritable
		r.JournalUnwritable = &t
	}
	if r.JournalReplaced != nil {
		t := *r.JournalReplaced
		r.JournalReplaced = &t
	}
	return r
}

// admitsLocked reports whether a new run may start: the phase admits and the journal is the
// one on disk. Callers hold h.mu.
func (h *Handle) admitsLocked() bool {
	return h.phase.admits() && h.rec.JournalReplaced == nil
}

// Admitting reports whether new runs may start: false once yielding, releasing, released or the
// guard was lost, and while the journal is replaced (WatchJournal).
func (h *Handle) Admitting() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.admitsLocked()
}

// Err returns nil while this handle owns, then why it stopped: ErrReleased (Release, or an
// approved takeover whose requester now owns); ErrHandoverFailed (wrapped, with the reason: the
// guard was let go for an approved takeover but nobody took it within 5 s; the caller should
// Acquire again, which owns at a new epoch); or ErrGuardReplaced (owner.lock was deleted or
// replaced; wrapped, with what was found; the caller should go back to Wait to contend for the
// new guard).
func (h *Handle) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lostErr
}

// BeginRun admits one run of routine for the scheduled time slot and counts it in flight until
// done is called (done is idempotent; call it when the run has ended and been recorded). It
// returns ErrNotAdmitting when the owner is yielding, releasing, released or has lost its guard,
// or while its journal is replaced (WatchJournal). A yield or Release never completes while runs
// are in flight.
func (h *Handle) BeginRun(routine string, slot time.Time) (done func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.admitsLocked() {
		return nil, ErrNotAdmitting
	}
	if h.inFlight == 0 {
		h.idle = make(chan struct{})
	}
	h.inFlight++
	h.rec.InFlight = h.inFlight
	h.rec.LastJob = &JobInfo{Routine: routine, Slot: slot, Started: time.Now()}
	job := h.rec.LastJob
	var once sync.Once
	return func() { once.Do(func() { h.endRun(job) }) }, nil
}

// endRun marks job finished and, when it was the last run in flight, wakes the heartbeat loop so
// a pending yield or Release can complete.
func (h *Handle) endRun(job *JobInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	job.Finished = &now
	h.inFlight--
	h.rec.InFlight = h.inFlight
	if h.inFlight == 0 {
		close(h.idle)
		h.nudge()
	}
}

// NoteTick records scheduler progress: one slot handled (ran, skipped or recorded missed), and
// the next slot due (zero: none). Observers use the counter to tell "stalled" from "idle".
func (h *Handle) NoteTick(nextDue time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rec.Progress++
	h.rec.LastTickAt = time.Now()
	h.rec.NextDueAt = nextDue
}

// NoteJournal records in owner.json (from the next heartbeat on) that the journal has refused
// writes since since, the latest reason being err, so observers diagnose journal-unwritable; a
// zero since clears it. The scheduler calls it (it never blocks).
func (h *Handle) NoteJournal(since time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if since.IsZero() {
		h.rec.JournalUnwritable = nil
		return
	}
	t := &JournalTrouble{Since: since}
	if err != nil {
		t.Error = err.Error()
	}
	h.rec.JournalUnwritable = t
}

// WatchJournal makes each heartbeat call check (nil: no check), after the guard's own check, the
// way owner.lock's identity is checked: check reports whether the journal file this owner writes
// is still the one at its path (journal.Journal.Intact). The first time it returns an error the
// handle stops admitting runs, its record carries journal_replaced {since, error} (written in
// the same heartbeat; observers say journal-replaced), and the returned channel is closed; the
// check is not called again until the next WatchJournal. JournalRestored admits again.
func (h *Handle) WatchJournal(check func() error) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.journalCheck = check
	h.journalGone = make(chan struct{})
	return h.journalGone
}

// JournalRestored clears journal_replaced: the owner has a journal at its path again, and runs
// are admitted (as far as the phase admits them); an approved takeover held meanwhile
// (handoverHeldLocked) completes.
func (h *Handle) JournalRestored() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rec.JournalReplaced = nil
	h.nudge()
}

// checkJournal runs the journal check of WatchJournal, if any, for the heartbeat loop.
func (h *Handle) checkJournal() {
	h.mu.Lock()
	check, gone := h.journalCheck, h.journalGone
	h.mu.Unlock()
	if check == nil {
		return
	}
	err := check()
	if err == nil {
		return
	}
	h.log.Error("the journal file was deleted or replaced while owning; stopped admitting runs", "err", err)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.journalGone != gone {
		return // a new WatchJournal came meanwhile
	}
	h.journalCheck = nil
	h.rec.JournalReplaced = &JournalTrouble{Since: time.Now(), Error: err.Error()}
	close(gone)
}

// Events delivers takeover, guard and write events; the channel is closed after the handle is
// lost. Events are dropped, never queued without bound, when the reader falls 64 behind.
func (h *Handle) Events() <-chan Event { return h.events }

// Lost is closed when this handle no longer owns (released, yielded, handover failed or guard
// replaced); Err says which.
func (h *Handle) Lost() <-chan struct{} { return h.lost }

// Pending returns a copy of the takeover request awaiting a decision (PolicyAsk), or nil when
// there is none. A request whose deadline (ExpiresAt) has passed is not pending: nobody answered
// it, so it is refused, and the heartbeat loop forgets it at that moment.
func (h *Handle) Pending() *Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == nil || !time.Now().Before(h.pending.ExpiresAt) {
		return nil
	}
	r := *h.pending
	return &r
}

// Policy returns how the next takeover request will be answered: Options.Policy (PolicyAllow
// when that was empty) until SetPolicy changes it.
func (h *Handle) Policy() Policy {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.policy
}

// SetPolicy changes how takeover requests that arrive from now on are answered: PolicyAllow and
// PolicyDeny answer at once, PolicyAsk hands the request to Options.OnRequest and waits for
// Decide. A request already pending stays pending. It returns ErrUnknownPolicy (wrapped, naming
// p) for any other value, and keeps the current policy then.
func (h *Handle) SetPolicy(p Policy) error {
	switch p {
	case PolicyAllow, PolicyDeny, PolicyAsk:
	default:
		return fmt.Errorf("%w: %q", ErrUnknownPolicy, p)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.policy = p
	return nil
}

// Decide answers the pending takeover request requestID (PolicyAsk) on behalf of the user. It
// returns ErrNoRequest when requestID is not the pending request (already answered, withdrawn,
// expired, or the handle is lost). The heartbeat loop writes and applies the answer within
// milliseconds; an approval is still refused if, by then, the challenger has withdrawn, died or
// run out of time.
func (h *Handle) Decide(requestID string, approve bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == nil || h.pending.ID != requestID || h.phase == phaseLost ||
		!time.Now().Before(h.pending.ExpiresAt) {
		return ErrNoRequest
	}
	d := DecisionDenied
	if approve {
		d = DecisionApproved
	}
	h.decided = &Reply{RequestID: requestID, Decision: d, By: "user", At: time.Now()}
	h.nudge()
	return nil
}

// Release stops admitting runs, waits for in-flight runs (or ctx), writes state "released" and
// unlocks the guard. It returns nil once released (or when the handle was already lost). If ctx
// ends first it returns ctx.Err() and keeps the guard, then completes the release by itself once
// the last run ends (Lost closes then): the guard is never let go with runs in flight.
func (h *Handle) Release(ctx context.Context) error {
	h.mu.Lock()
	switch h.phase {
	case phaseLost:
		h.mu.Unlock()
		return nil
	case phaseOwning, phaseAsking, phaseYielding:
		h.setPhaseLocked(phaseReleasing, change{why: "Release"})
	case phaseHandingOver:
		// Drained and letting go already; this ends the wait for the successor.
		h.setPhaseLocked(phaseReleased, change{why: "Release during the handover"})
	}
	h.nudge()
	h.mu.Unlock()
	select {
	case <-h.loopDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// emit delivers e without blocking (dropping it, with a warning, when Events is full). Callers
// hold h.mu.
func (h *Handle) emit(e Event) {
	if h.phase == phaseLost {
		return
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	select {
	case h.events <- e:
	default:
		h.log.Warn("ownership event dropped: nobody is reading Handle.Events", "kind", e.Kind)
	}
}

// nudge wakes the heartbeat loop without blocking.
func (h *Handle) nudge() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}
