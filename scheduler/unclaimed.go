package scheduler

// Slots the journal could not record. While another process holds the journal's lock, the disk
// is full or the file cannot be written, no claim can be made, so no run starts (a run never
// starts without a durable claim). The engine keeps those slots and records each once the
// journal accepts writes again — `missed`, "journal unavailable from … to …" — so history has no
// holes; meanwhile it tells the ownership handle (EngineOptions.OnJournal), so observers say
// journal-unwritable rather than guess.

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/routinely/routinely/scheduler/journal"
	"modernc.org/sqlite"
)

const (
	// slowJournalWrite: a journal transaction running this long while the process ran (not
	// counting a stop, runclock) is waiting for another process's lock (SQLite's busy timeout
	// is 5 s) or for a failing disk; the journal counts as unwritable from when it began. A
	// healthy write takes milliseconds.
	slowJournalWrite = time.Second
	// journalRetryEvery is how often the slots not yet recorded are written again.
	journalRetryEvery = time.Second
)

// refusedByJournal reports whether a claim's err means the journal did not take the write
// (locked, full, failing), as opposed to a decision: the slot was claimed already, a newer owner
// exists, or the engine is closing its journal.
func refusedByJournal(err error) bool {
	return err != nil && !errors.Is(err, journal.ErrSlotClaimed) && !errors.Is(err, journal.ErrFenced) &&
		!errors.Is(err, journal.ErrClosed) && !errors.Is(err, journal.ErrReadOnly)
}

// unrecorded is one routine's slots the journal refused: the newest maxMissedRows one by one;
// older ones are counted and recorded as one row, as catch-up does.
type unrecorded struct {
	claims  []journal.Claim // oldest first; a run's claim is already rewritten as missed
	dropped int             // slots beyond maxMissedRows
	first   time.Time
	last    time.Time // the dropped slots' range
}

// add appends c, moving the oldest claim into the dropped count beyond maxMissedRows.
func (u *unrecorded) add(c journal.Claim) {
	u.claims = append(u.claims, c)
	for len(u.claims) > maxMissedRows {
		old := u.claims[0]
		u.claims = u.claims[1:]
		if u.dropped == 0 || old.Slot.Before(u.first) {
			u.first = old.Slot
		}
		if old.Slot.After(u.last) {
			u.last = old.Slot
		}
		u.dropped++
	}
}

// journalTrouble is the engine's account of a journal that refuses writes. Guarded by mu.
type journalTrouble struct {
	mu    sync.Mutex
	since time.Time // engine clock: when the first refused or slow write began; zero: none
	cause error     // the latest reason
	slow  bool      // cause only says a write is taking long (no refusal seen yet)
	slots map[string]*unrecorded
	// requests are run-now requests whose claim was refused: served again once writable.
	requests []int64
	// told is what OnJournal was last told, so it hears each change once.
	toldSince time.Time
	toldCause string
	// began receives (capacity 1, never blocking the sender) when a refusal is kept, so that
	// watchJournal, asleep while the journal is idle, retries it.
	began chan struct{}
}

// open reports whether slots or requests wait for the journal, or a write was reported slow.
func (tr *journalTrouble) open() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return !tr.since.IsZero()
}

// setClaiming marks run as waiting for its claim: slots of its routine due meanwhile are held
// (dispatch) until claimSettled decides them.
func (e *Engine) setClaiming(run *inflight) {
	e.mu.Lock()
	run.claiming = true
	e.mu.Unlock()
}

// keepHeldLocked ends run's hold if no claim ended it (claimSettled): its run never got to
// claim — it waited for its jitter, the catch-up limiter or the hub and the engine stopped, the
// gate refused it, or the hub decided the slot. The slots held meanwhile are kept as refused
// (keepRefusedLocked): unclaimed, so whoever owns next handles them, this owner if it resumes.
// startLocked calls it once execute has returned, so every early return is covered (slots
// dropped by an early return were lost without a record; TestHubTwoDevicesOneSchedule found
// one) and none due until then meets the overlap policy of a run that never started. The
// caller holds e.mu.
func (e *Engine) keepHeldLocked(run *inflight) {
	for _, ev := range run.held {
		e.keepRefusedLocked(run.a, ev)
	}
	run.claiming, run.held = false, nil
}

// claimSettled ends run's claim wait (claim began at began on the engine clock, took waited of
// real time while this process ran — a stop in the middle is not counted, runclock — err its
// result) and decides the slots held meanwhile. The claim written quickly (or only slowly
// because the process was stopped, as a suspend is not counted either): the run is in flight,
// so they meet the overlap policy as if they came a moment later. The
// journal refused the claim, or took longer than slowJournalWrite: no run was in flight while
// they were due, the journal was — they are recorded missed (journal unavailable) once it
// accepts writes, and run-now requests are served again then. Any other refusal (claimed
// already, fenced): the overlap policy, as before the claim.
func (e *Engine) claimSettled(name string, run *inflight, began time.Time, waited time.Duration, err error) {
	e.mu.Lock()
	run.claiming = false
	held := run.held
	run.held = nil
	lost := refusedByJournal(err) || (err == nil && waited > slowJournalWrite)
	var skips []slotEvent
	if !lost {
		for _, ev := range held {
			if skip := e.overlapLocked(run.a, ev); skip != nil {
				skips = append(skips, *skip)
			}
		}
	}
	e.mu.Unlock()
	for _, ev := range skips {
		e.record(name, ev, journal.OutcomeSkipped, "overlap")
	}
	if !lost || len(held) == 0 {
		return
	}
	cause := err
	if cause == nil {
		cause = fmt.Errorf("a claim waited %s for the journal", waited.Round(time.Millisecond))
	}
	now := e.clock.Now()
	for _, ev := range held {
		e.log.Debug("slot due while the claim before it waited for the journal; recording it missed",
			"routine", name, "slot", ev.slot, "err", cause)
		e.claimRefused(journal.Claim{Routine: name, Slot: ev.slot, Key: ev.key, Trigger: ev.trigger,
			Outcome: journal.OutcomeRunning, Started: now, LateBy: lateBy(now, ev)}, true, ev.requestID, began, cause)
	}
}

// claimRefused keeps c, a claim the journal refused (err) in a write begun at began, to record
// once the journal accepts writes: a run's claim (run) as missed, a skipped or missed record as
// it is. A run-now request's (requestID) is served again instead. It reports the trouble.
func (e *Engine) claimRefused(c journal.Claim, run bool, requestID int64, began time.Time, err error) {
	tr := &e.trouble
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.since.IsZero() || began.Before(tr.since) {
		tr.since = began
	}
	tr.cause, tr.slow = err, false
	select {
	case tr.began <- struct{}{}:
	default:
	}
	switch {
	case requestID != 0:
		tr.requests = append(tr.requests, requestID)
	default:
		if run {
			c.Outcome, c.Reason = journal.OutcomeMissed, "" // the reason is written with the outage's end
		}
		if tr.slots == nil {
			tr.slots = map[string]*unrecorded{}
		}
		u := tr.slots[c.Routine]
		if u == nil {
			u = &unrecorded{}
			tr.slots[c.Routine] = u
		}
		u.add(c)
	}
	e.tellLocked()
}

// watchJournal retries the slots the journal refused every journalRetryEvery and reports a
// write that takes too long, until stop is closed. While no write is in flight and nothing
// waits to be recorded it sleeps until a write begins or a claim is refused, so an idle owner
// is not woken every second for nothing.
func (e *Engine) watchJournal(stop <-chan struct{}) {
	t := time.NewTicker(journalRetryEvery)
	defer t.Stop()
	for {
		if e.j.WriteWaiting() == 0 && !e.trouble.open() {
			t.Stop()
			select {
			case <-stop:
				return
			case <-e.j.WriteBegan():
			case <-e.trouble.began:
			}
			t.Reset(journalRetryEvery)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
		e.journalChecks.Add(1)
		if w := e.j.WriteWaiting(); w > slowJournalWrite {
			e.journalSlow(w)
			continue
		}
		e.recordUnrecorded()
	}
}

// journalSlow reports a journal write in progress for waited: the journal is unwritable from
// when it began (claims are waiting for it).
func (e *Engine) journalSlow(waited time.Duration) {
	tr := &e.trouble
	tr.mu.Lock()
	defer tr.mu.Unlock()
	began := e.clock.Now().Add(-waited)
	if tr.since.IsZero() || began.Before(tr.since) {
		tr.since = began
	}
	if tr.cause == nil || tr.slow {
		tr.cause, tr.slow = fmt.Errorf("a journal write has waited %s (another process holds the journal's lock, or the disk is failing)", waited.Round(time.Second)), true
	}
	e.tellLocked()
}

// recordOlderFirst writes the slots the journal refused before the caller writes a newer slot's
// row (a claim or a record), so that no slot is in the journal while an older one of any routine
// only waits in memory. The next owner's catch-up starts after each routine's latest recorded
// slot: an older slot still waiting when this owner yields or dies would otherwise be lost
// without a word. It costs nothing while nothing waits. While another caller is recording them
// already it does not wait for that: a hundred claims due together during an outage would
// otherwise each wait out the busy timeout in turn, instead of once in one group commit.
func (e *Engine) recordOlderFirst() {
	tr := &e.trouble
	tr.mu.Lock()
	waiting := len(tr.slots) > 0
	tr.mu.Unlock()
	if !waiting || !e.recording.TryLock() {
		return
	}
	defer e.recording.Unlock()
	e.recordUnrecordedLocked()
}

// recordUnrecorded writes every slot the journal refused, with the outage's span in the reason
// of the runs' claims, and, once all are written, ends the trouble and serves the refused run-now
// requests again. A refused write keeps what was not written for the next try. It returns
// whether the journal is free of trouble. Calls are serialized (recording): the watcher, the
// engine's end and recordOlderFirst may call it at once.
func (e *Engine) recordUnrecorded() bool {
	e.recording.Lock()
	defer e.recording.Unlock()
	return e.recordUnrecordedLocked()
}

// recordUnrecordedLocked is recordUnrecorded for a caller holding e.recording.
func (e *Engine) recordUnrecordedLocked() bool {
	tr := &e.trouble
	tr.mu.Lock()
	if tr.since.IsZero() {
		tr.mu.Unlock()
		return true
	}
	since, cause, slots, requests := tr.since, tr.cause, tr.slots, tr.requests
	tr.slots, tr.requests = nil, nil
	tr.mu.Unlock()

	// An empty transaction first: it waits for another process's lock like any write, so the
	// outage's end written below is when the journal took writes again, not when this began.
	failed := e.j.WaitWritable()
	until := e.clock.Now()
	reason := journalReason(since, until, cause)
	names := make([]string, 0, len(slots))
	for name := range slots {
		names = append(names, name)
	}
	sort.Strings(names)
	// One row per claim kept, plus one per routine that dropped some (its first dropped slot).
	type row struct {
		c       journal.Claim // as kept: a run's claim has no reason yet
		summary *unrecorded
	}
	var rows []row
	for _, name := range names {
		u := slots[name]
		if u.dropped > 0 {
			rows = append(rows, row{c: journal.Claim{Routine: name, Slot: u.first, Trigger: journal.TriggerSchedule,
				Outcome: journal.OutcomeMissed, Started: until}, summary: u})
		}
		// In slot order: a slot held behind a refused claim is refused before that claim is.
		sort.SliceStable(u.claims, func(i, k int) bool { return u.claims[i].Slot.Before(u.claims[k].Slot) })
		for _, c := range u.claims {
			rows = append(rows, row{c: c})
		}
	}
	written, done := 0, 0
	for done < len(rows) && failed == nil {
		n := min(len(rows)-done, journal.MaxBatch)
		cs := make([]journal.Claim, n)
		for i, r := range rows[done : done+n] {
			cs[i] = r.c
			switch {
			case r.summary != nil:
				cs[i].Reason = fmt.Sprintf("%d slots from %s to %s missed: %s", r.summary.dropped,
					r.summary.first.Format(time.RFC3339), r.summary.last.Format(time.RFC3339), reason)
			case cs[i].Reason == "":
				cs[i].Reason = reason
			}
		}
		refusals, err := e.j.ClaimAll(cs)
		if err != nil {
			failed = err
			break
		}
		e.changed()
		for i, rerr := range refusals {
			switch {
			case rerr == nil:
				written++
			case errors.Is(rerr, journal.ErrSlotClaimed):
				e.duplicates.Add(1) // the claim was written after all
			default:
				e.log.Warn("slot not recorded", "routine", cs[i].Routine, "slot", cs[i].Slot, "err", rerr)
			}
		}
		done += n
	}

	if failed == nil && len(requests) > 0 {
		e.mu.Lock() // outside tr.mu: the two locks never nest
		e.serveAgainLocked(requests...)
		e.mu.Unlock()
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case failed != nil && !refusedByJournal(failed):
		// Fenced (a newer owner records from its own catch-up on) or closing: nothing more
		// this engine can write.
		e.log.Warn("slots the journal refused are not recorded", "slots", len(rows)-done,
			"run_now_requests", len(requests), "err", failed)
		tr.slots, tr.requests = nil, nil
		tr.since, tr.cause, tr.slow = time.Time{}, nil, false
		e.tellLocked()
		return true
	case failed != nil:
		// Keep what was not written, ahead of any slot refused meanwhile.
		rest := map[string]*unrecorded{}
		keep := func(name string) *unrecorded {
			if rest[name] == nil {
				rest[name] = &unrecorded{}
			}
			return rest[name]
		}
		for _, r := range rows[done:] {
			u := keep(r.c.Routine)
			if r.summary != nil {
				u.first, u.last, u.dropped = r.summary.first, r.summary.last, r.summary.dropped
				continue
			}
			u.add(r.c)
		}
		for name, newer := range tr.slots {
			u := keep(name)
			for _, c := range newer.claims {
				u.add(c)
			}
			if newer.dropped > 0 {
				if u.dropped == 0 || newer.first.Before(u.first) {
					u.first = newer.first
				}
				if newer.last.After(u.last) {
					u.last = newer.last
				}
				u.dropped += newer.dropped
			}
		}
		tr.slots = rest
		tr.requests = append(requests, tr.requests...)
		tr.cause, tr.slow = failed, false
		e.tellLocked()
		return false
	}
	if written > 0 || len(requests) > 0 {
		e.log.Info("the journal accepts writes again; the slots it refused are recorded",
			"from", since, "to", until, "recorded", written, "run_now_requests_served_again", len(requests))
	} else {
		e.log.Info("the journal accepts writes again", "from", since, "to", until)
	}
	if len(tr.slots) > 0 || len(tr.requests) > 0 {
		return false // refused while these were written: the trouble goes on
	}
	tr.since, tr.cause, tr.slow = time.Time{}, nil, false
	e.tellLocked()
	return true
}

// abandonUnrecorded logs, at the engine's end, the slots the journal never took: nobody else
// knows them (the next owner's catch-up starts after the latest recorded slot).
func (e *Engine) abandonUnrecorded() {
	if e.recordUnrecorded() {
		return
	}
	tr := &e.trouble
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for name, u := range tr.slots {
		if len(u.claims) == 0 {
			continue
		}
		e.log.Error("journal still refuses writes; these slots did not run and are not in the history",
			"routine", name, "slots", len(u.claims)+u.dropped, "first", u.claims[0].Slot,
			"last", u.claims[len(u.claims)-1].Slot, "err", tr.cause)
	}
}

// tellLocked tells OnJournal the trouble as it is now, when it changed. The caller holds
// e.trouble.mu, so reports arrive in order.
func (e *Engine) tellLocked() {
	tr := &e.trouble
	cause := ""
	if tr.cause != nil {
		cause = tr.cause.Error()
	}
	if tr.since.Equal(tr.toldSince) && cause == tr.toldCause {
		return
	}
	switch {
	case !tr.toldSince.IsZero() || tr.since.IsZero():
	case tr.slow:
		e.log.Warn("a journal write is taking long (another process holding its lock?); slots due meanwhile do not run until it is written",
			"since", tr.since, "err", tr.cause)
	default:
		e.log.Error("the journal refuses writes: slots due now do not run (no run starts without its claim) and are recorded missed once it accepts writes",
			"since", tr.since, "err", tr.cause)
	}
	tr.toldSince, tr.toldCause = tr.since, cause
	if e.opts.OnJournal != nil {
		e.opts.OnJournal(tr.since, tr.cause)
	}
}

// journalReason is the reason recorded for a slot lost to the journal between since and until:
// "journal unavailable from … to … (cause)", with SQLite's own words for the cause.
func journalReason(since, until time.Time, cause error) string {
	why := ""
	var se *sqlite.Error
	switch {
	case errors.As(cause, &se):
		why = " (" + se.Error() + ")"
	case cause != nil:
		why = " (" + cause.Error() + ")"
	}
	return fmt.Sprintf("journal unavailable from %s to %s%s", since.Format(time.RFC3339), until.Format(time.RFC3339), why)
}
