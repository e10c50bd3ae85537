package ownership

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestPhaseTable checks every phase change, legal or not, against the table the package doc
// gives: a legal change sets admission, the record's state and the phase event together; an
// illegal one changes nothing and is logged at error.
func TestPhaseTable(t *testing.T) {
	all := []phase{phaseOwning, phaseAsking, phaseYielding, phaseHandingOver, phaseReleasing, phaseReleased, phaseLost}
	allowed := map[phase]string{ // the doc's table, written out independently of phaseTable
		phaseOwning:      "asking releasing lost",
		phaseAsking:      "owning yielding releasing lost",
		phaseYielding:    "owning handing-over releasing lost",
		phaseHandingOver: "owning released lost",
		phaseReleasing:   "released lost",
		phaseReleased:    "lost",
		phaseLost:        "",
	}
	admits := map[phase]bool{phaseOwning: true, phaseAsking: true}
	state := map[phase]State{
		phaseOwning: StateOwning, phaseAsking: StateOwning, phaseYielding: StateYielding,
		phaseReleasing: StateYielding, phaseHandingOver: StateReleased, phaseReleased: StateReleased,
	}
	req := &Request{ID: "r1"}
	for _, from := range all {
		for _, to := range all {
			if from == to {
				continue
			}
			legalWant := strings.Contains(" "+allowed[from]+" ", " "+to.String()+" ")
			t.Run(fmt.Sprintf("%s→%s", from, to), func(t *testing.T) {
				var logs bytes.Buffer
				h := phaseHandle(from, &logs)
				before := h.rec.State
				h.mu.Lock()
				got := h.setPhaseLocked(to, change{req: req, err: ErrReleased, why: "test"})
				h.mu.Unlock()
				if got != legalWant {
					t.Fatalf("setPhaseLocked = %t, want %t", got, legalWant)
				}
				if !legalWant {
					if h.phase != from || h.rec.State != before || len(h.events) != 0 {
						t.Errorf("illegal change altered the handle: phase %s state %s, %d events", h.phase, h.rec.State, len(h.events))
					}
					if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "illegal ownership phase change") {
						t.Errorf("illegal change not logged at error: %q", logs.String())
					}
					return
				}
				if h.phase != to || h.Admitting() != admits[to] {
					t.Errorf("phase %s admitting %t, want %s admitting %t", h.phase, h.Admitting(), to, admits[to])
				}
				if to != phaseLost && h.rec.State != state[to] {
					t.Errorf("record state %s, want %s", h.rec.State, state[to])
				}
				if to == phaseLost && (h.rec.State != before || !isClosedChan(h.lost) || !errors.Is(h.Err(), ErrReleased)) {
					t.Errorf("lost: record state %s (was %s), Lost closed %t, Err %v", h.rec.State, before, isClosedChan(h.lost), h.Err())
				}
				if to != phaseLost && (h.rec.State == StateYielding && h.rec.YieldingSince.IsZero() ||
					h.rec.State == StateOwning && !h.rec.YieldingSince.IsZero()) {
					t.Errorf("state %s with yielding_since %v", h.rec.State, h.rec.YieldingSince)
				}
				var kinds []EventKind
				for e := range drain(h.events) {
					kinds = append(kinds, e.Kind)
				}
				want := map[phase][]EventKind{
					phaseYielding: {EventYielding}, phaseReleasing: {EventYielding}, phaseLost: {EventReleased},
				}[to]
				if fmt.Sprint(kinds) != fmt.Sprint(want) {
					t.Errorf("events %v, want %v", kinds, want)
				}
				if to == phaseYielding && h.yieldFor != req {
					t.Errorf("yieldFor %v, want the approved request", h.yieldFor)
				}
			})
		}
	}
}

// TestPhaseLostEvents checks the event a lost handle reports for each cause.
func TestPhaseLostEvents(t *testing.T) {
	replaced := fmt.Errorf("%w: owner.lock is a different file now", ErrGuardReplaced)
	failed := fmt.Errorf("%w: requester pid 1 did not take the routines", ErrHandoverFailed)
	for _, c := range []struct {
		err  error
		want []EventKind
	}{
		{ErrReleased, []EventKind{EventReleased}},
		{replaced, []EventKind{EventGuardReplaced}},
		{failed, nil},
	} {
		h := phaseHandle(phaseOwning, &bytes.Buffer{})
		h.mu.Lock()
		h.setPhaseLocked(phaseLost, change{err: c.err})
		h.mu.Unlock()
		var kinds []EventKind
		for e := range drain(h.events) {
			kinds = append(kinds, e.Kind)
		}
		if fmt.Sprint(kinds) != fmt.Sprint(c.want) || h.Err() != c.err {
			t.Errorf("lost with %v: events %v, Err %v; want %v", c.err, kinds, h.Err(), c.want)
		}
	}
}

// phaseHandle returns a handle in phase p, as far as setPhaseLocked looks, logging to logs.
func phaseHandle(p phase, logs *bytes.Buffer) *Handle {
	h := &Handle{
		log:    slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		phase:  p,
		events: make(chan Event, eventBuffer),
		lost:   make(chan struct{}),
	}
	h.rec.State = p.recordState()
	if h.rec.State == StateYielding {
		h.rec.YieldingSince = h.rec.HeartbeatAt.AddDate(2000, 0, 0)
	}
	if p == phaseLost {
		close(h.events)
		close(h.lost)
	}
	return h
}

// drain returns ch's buffered events once ch is closed, or those buffered now.
func drain(ch chan Event) chan Event {
	out := make(chan Event, eventBuffer)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				close(out)
				return out
			}
			out <- e
		default:
			close(out)
			return out
		}
	}
}

func isClosedChan(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
