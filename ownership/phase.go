package ownership

import (
	"errors"
	"fmt"
	"time"
)

// phase is where an owner's Handle is in its life. It is the one source of whether runs are
// admitted, of the state owner.json shows, and of the phase events on Handle.Events; it changes
// only through setPhaseLocked, which checks each change against phaseTable (the table is
// repeated in doc.go).
type phase int

// Phases. Which requests exist (pending, yieldFor) is kept beside the phase: a request can be
// pending while releasing, since Release does not stop the owner from answering requests.
const (
	phaseOwning      phase = iota // admitting; state "owning"
	phaseAsking                   // admitting; a valid takeover request awaits Decide or the policy
	phaseYielding                 // not admitting; draining for the approved request yieldFor
	phaseHandingOver              // drained for yieldFor; state "released"; guard let go next, then awaitSuccessor
	phaseReleasing                // not admitting; draining for Release (to nobody); state "yielding"
	phaseReleased                 // drained for Release; state "released"; guard let go next
	phaseLost                     // the handle has ended: Err says why; Lost, Events and OnRequest's queue are closed
)

var phaseNames = [...]string{"owning", "asking", "yielding", "handing-over", "releasing", "released", "lost"}

// String names p as the logs and the package doc do.
func (p phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return fmt.Sprintf("phase(%d)", int(p))
	}
	return phaseNames[p]
}

// admits reports whether BeginRun may start a run in phase p.
func (p phase) admits() bool { return p == phaseOwning || p == phaseAsking }

// recordState is the state owner.json shows in phase p. A lost handle keeps the last state it
// wrote (released, or whatever it was when the guard was replaced): nothing writes it again.
func (p phase) recordState() State {
	switch p {
	case phaseOwning, phaseAsking:
		return StateOwning
	case phaseYielding, phaseReleasing:
		return StateYielding
	default:
		return StateReleased
	}
}

// phaseTable lists every legal change: from → the phases it may go to. Guard loss (→ lost) can
// happen in any phase the heartbeat loop beats in; handing-over and released exist only inside
// finishIfDrained, which the loop runs to the end.
var phaseTable = map[phase][]phase{
	phaseOwning:      {phaseAsking, phaseReleasing, phaseLost},
	phaseAsking:      {phaseOwning, phaseYielding, phaseReleasing, phaseLost},
	phaseYielding:    {phaseOwning, phaseHandingOver, phaseReleasing, phaseLost},
	phaseHandingOver: {phaseOwning, phaseReleased, phaseLost},
	phaseReleasing:   {phaseReleased, phaseLost},
	phaseReleased:    {phaseLost},
	phaseLost:        nil,
}

// legal reports whether phaseTable allows from → to.
func legal(from, to phase) bool {
	for _, p := range phaseTable[from] {
		if p == to {
			return true
		}
	}
	return false
}

// change is what a phase change carries besides the new phase.
type change struct {
	req *Request // → yielding: the approved request
	// err is, → lost, why: ErrReleased, ErrHandoverFailed (wrapped) or ErrGuardReplaced
	// (wrapped, with what intact found); it becomes Err.
	err error
	why string // for the log
}

// setPhaseLocked moves the handle to phase to, and derives from it what every phase change
// must set together: admission (BeginRun), the record's state and yielding_since, the phase
// event (yielding, released, guard-replaced) and, → lost, Err and the closing of Lost, Events
// and OnRequest's queue. It returns false, changing nothing, when phaseTable forbids the
// change: that is a bug in this package, logged at error. A refused change starts no run and
// lets go of no guard (finishIfDrained unlocks only after a change it asked for succeeded), so
// keeping the old phase is safe, whereas a panic here would end the process that holds the
// guard with runs in flight. Callers hold h.mu. A change to the phase it is in is a no-op
// (true).
func (h *Handle) setPhaseLocked(to phase, c change) bool {
	from := h.phase
	if from == to {
		return true
	}
	if !legal(from, to) {
		h.log.Error("bug: illegal ownership phase change; keeping the phase", "from", from, "to", to, "why", c.why)
		return false
	}
	if st := to.recordState(); to != phaseLost && h.rec.State != st {
		h.rec.State = st
		switch st {
		case StateYielding:
			h.rec.YieldingSince = time.Now()
		case StateOwning:
			h.rec.YieldingSince = time.Time{}
		}
	}
	h.log.Debug("ownership phase", "from", from, "to", to, "why", c.why)
	switch to {
	case phaseYielding:
		h.yieldFor = c.req
		h.emit(Event{Kind: EventYielding, Request: c.req})
	case phaseReleasing:
		h.emit(Event{Kind: EventYielding})
	case phaseOwning:
		h.yieldFor = nil
	case phaseLost:
		switch {
		case c.err == ErrReleased:
			h.emit(Event{Kind: EventReleased})
		case errors.Is(c.err, ErrGuardReplaced):
			h.emit(Event{Kind: EventGuardReplaced, Err: c.err})
		}
		h.lostErr = c.err
		h.pending, h.decided, h.yieldFor = nil, nil, nil
		close(h.events) // emit sends nothing from now on: the phase is lost
		close(h.lost)
		if h.asks != nil {
			close(h.asks)
		}
	}
	h.phase = to // last: emit above still sends while the old phase is not lost
	return true
}

// phaseIs reports whether the handle is in phase p.
func (h *Handle) phaseIs(p phase) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.phase == p
}
