package scheduler

// The owner's pollers of what other processes leave in the journal: run-now requests and pauses.

import (
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/routinely/routinely/scheduler/journal"
)

// pollRequests picks up run-now requests and pauses from the journal as soon as a file watch
// (changes, from watchJournalFiles; nil: none) reports a write to it (else every pollEvery,
// < 1 s), and runs each request through the same claim, overlap, timeout and history path as a
// scheduled slot. It also retries the start's catch-up pass and refused slots, every pollEvery
// while there are any.
func (e *Engine) pollRequests(changes <-chan struct{}, stop <-chan struct{}) {
	t := time.NewTimer(0)
	defer t.Stop()
	commit := commitLooks{first: e.pollEvery, window: e.commitWait}
	if changes != nil {
		// A write already under way when the watch was set up is never reported.
		commit.reported(time.Now())
	}
	for {
		if e.journalChanged() {
			e.refreshPauses()
			if !e.serveRequests() {
				e.pollAgain()
			}
		}
		e.runStartPass()
		e.catchUpRefused()
		t.Reset(commit.next(time.Now(), e.nextPoll(changes != nil)))
		select {
		case <-stop:
			return
		case <-t.C:
		case <-e.pollWake:
		case <-changes:
			commit.reported(time.Now())
			// Most commits are visible a few milliseconds after their first write.
			select {
			case <-stop:
				return
			case <-time.After(commitSettle):
			}
			// The look below covers every write reported until now, so a notice left from the
			// same commit starts no second settle; commitLooks' window runs from the latest one,
			// for a write begun during the settle whose commit the look may not see yet.
			select {
			case <-changes:
				commit.reported(time.Now())
			default:
			}
		}
	}
}

// commitLooks is the poller's wait for commits it cannot see yet. The watch reports a write as
// it starts, before its commit is visible (the -wal is written, then synced, then the commit
// published in the -shm, which raises no event), and a write already under way when the watch
// was set up is not reported at all. So after the watch is set up and after every reported
// write, the poller looks again after pollEvery, then twice as long each time, until the
// engine's commitWait has passed since the latest of them: after a reported write about 0.02
// (commitSettle), 0.5, 1.5, 3.5, 7.5 and 10 s after it. It keeps looking even when a look in
// between saw a change, because that change can be another commit (the owner's own claim, a
// second writer's) while the reported one is still being synced: a run-now request was then
// left for the 30 s safety net, past the 15 s `run` waits for it to start
// (TestACommitSeenLateIsStillServed). While nothing changes each look is one prepared
// statement (journalChanged).
type commitLooks struct {
	first, window time.Duration // the first wait after a report (pollEvery); how long to look (commitWait)
	since         time.Time     // the latest reported write (or the watch's setup); zero: none awaited
	wait          time.Duration // before the next look
}

// reported notes a write the watch reported at now: the looks start again from first.
func (c *commitLooks) reported(now time.Time) {
	c.since, c.wait = now, c.first
}

// next returns how long the poller sleeps from now, given idle, its sleep with no commit
// awaited.
func (c *commitLooks) next(now time.Time, idle time.Duration) time.Duration {
	if c.since.IsZero() {
		return idle
	}
	left := c.window - now.Sub(c.since)
	if left <= 0 {
		c.since = time.Time{}
		return idle
	}
	d := min(idle, c.wait, left)
	c.wait *= 2
	return d
}

// commitSettle is how long the poller waits after a write to the journal's files is reported
// before it looks: long enough for most commits (write, fsync, publish) to become visible.
const commitSettle = 20 * time.Millisecond

// idlePoll is how often the poller looks while a file watch reports the journal's changes and
// nothing is left to retry: a safety net for a change the watch did not report, and for a commit
// that became visible more than commitWait after its write was reported. The watch loses events
// only when its queue overflows, which it reports (watchJournalFiles takes that as a change), so
// the net can be wide: each look is a wake-up of an idle owner.
const idlePoll = 30 * time.Second

// nextPoll is how long the poller sleeps: pollEvery (0.5 s) while the start pass, a refused slot
// or a request is waiting to be retried, or when no file watch reports the journal's changes;
// idlePoll otherwise, so that an idle owner is not woken twice a second for nothing.
func (e *Engine) nextPoll(watched bool) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	busy := e.startLast != nil || e.repoll
	for _, a := range e.routines {
		busy = busy || len(a.refused) > 0
	}
	if busy || !watched {
		return e.pollEvery
	}
	return idlePoll
}

// watchJournalFiles returns a channel that receives when another process (or this one) writes
// the journal, from an fsnotify watch on its directory that keeps only journal.db and its -wal
// (a commit in WAL mode writes the -wal) and no attribute-only change, until stop; or nil when no watch can be set up. At
// most one notice waits in the channel: a burst of writes wakes the poller once.
func (e *Engine) watchJournalFiles(stop <-chan struct{}) <-chan struct{} {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	path := e.j.Path()
	if err := w.Add(filepath.Dir(path)); err != nil {
		_ = w.Close()
		return nil
	}
	db, wal := filepath.Base(path), filepath.Base(path)+"-wal"
	out := make(chan struct{}, 1)
	go func() {
		defer func() { _ = w.Close() }()
		for {
			select {
			case <-stop:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				// A reader opening the journal changes its files' attributes (SQLite running as
				// root hands the -wal and -shm to the database's owner with fchown): that is no
				// write, and every look (status, the desktop) would wake the owner for it.
				if n := filepath.Base(ev.Name); (n == db || n == wal) && ev.Op != fsnotify.Chmod {
					select {
					case out <- struct{}{}:
					default:
					}
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflowed queue (fsnotify.ErrEventOverflow) lost events: look now.
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}

// serveAgainLocked forgets that this engine took the run-now requests ids, so the next poll
// serves them again: their run was never claimed (the gate refused it while the owner yielded,
// or the journal refused the claim), and the request stays pending in the journal. The caller
// holds e.mu.
func (e *Engine) serveAgainLocked(ids ...int64) {
	for _, id := range ids {
		delete(e.taken, id)
	}
	e.repoll = true
	e.wakePoller()
}

// wakePoller makes the request poller look now rather than at the end of its idle sleep (up to
// idlePoll), after something it retries appeared: a refused slot or a request to serve again.
// It never blocks.
func (e *Engine) wakePoller() {
	select {
	case e.pollWake <- struct{}{}:
	default:
	}
}

// journalChanged reports whether the poller must read pauses and requests again: the journal's
// data_version moved since the last read (another process, or this one's writer, committed), or
// pollAgain asked for it. While nothing changes an idle owner's poll is one prepared statement,
// not two queries. A data_version that cannot be read counts as a change.
func (e *Engine) journalChanged() bool {
	e.looked.Add(1)
	v, err := e.j.DataVersion()
	e.mu.Lock()
	defer e.mu.Unlock()
	changed := err != nil || e.repoll || !e.versionSeen || v != e.version
	e.version, e.versionSeen, e.repoll = v, err == nil, false
	return changed
}

// pollAgain makes the next poll read pauses and requests even if the journal did not change.
func (e *Engine) pollAgain() {
	e.mu.Lock()
	e.repoll = true
	e.mu.Unlock()
}

// serveRequests dispatches every pending request once. It returns false when it could not serve
// them all (the owner does not admit, a read or write failed): the next poll must look again.
func (e *Engine) serveRequests() bool {
	if !e.gate.Admitting() {
		return false
	}
	reqs, err := e.j.PendingRequests()
	if err != nil {
		e.log.Warn("run-now requests", "err", err)
		return false
	}
	looked := true
	for _, rq := range reqs {
		e.mu.Lock()
		_, known := e.routines[rq.Routine]
		taken := e.taken[rq.ID]
		e.mu.Unlock()
		if taken {
			continue
		}
		if !known {
			if err := e.j.AnswerRequest(rq.ID, 0, fmt.Sprintf("no routine %q in the owner's configuration", rq.Routine)); err != nil {
				looked = false // still pending: answer it at the next poll
			}
			continue
		}
		// Mark it taken before dispatching so the next poll does not pick it again; the run's
		// claim (or its skip record) replaces the placeholder with the run id.
		if err := e.j.AnswerRequest(rq.ID, -1, ""); err != nil {
			e.log.Warn("take run-now request", "err", err)
			looked = false
			continue
		}
		e.mu.Lock()
		e.taken[rq.ID] = true
		e.mu.Unlock()
		e.dispatch(rq.Routine, slotEvent{slot: e.clock.Now().Truncate(time.Second), trigger: journal.TriggerManual,
			key: fmt.Sprintf("manual:%d", rq.ID), requestID: rq.ID})
	}
	return looked
}

// refreshPauses re-reads the pauses from the journal (any process may pause or resume), so the
// run path checks a pause in memory instead of querying SQLite for every slot.
func (e *Engine) refreshPauses() {
	p, err := e.j.Pauses(e.clock.Now())
	if err != nil {
		e.log.Warn("read pauses", "err", err)
		return
	}
	e.mu.Lock()
	same := maps.EqualFunc(e.pauses, p, samePause)
	e.pauses = p
	e.mu.Unlock()
	if !same {
		e.changed()
	}
}

// samePause reports whether a and b pause alike (until compared as instants).
func samePause(a, b journal.Pause) bool {
	return a.Paused == b.Paused && a.Note == b.Note && (a.Until == nil) == (b.Until == nil) &&
		(a.Until == nil || a.Until.Equal(*b.Until))
}

// pauseOfLocked returns routine's effective pause at now from the cache: its own, else the
// global one; a pause whose end has passed no longer counts.
func (e *Engine) pauseOfLocked(routine string, now time.Time) journal.Pause {
	p, ok := e.pauses[routine]
	if !ok {
		p = e.pauses[""]
	}
	if p.Until != nil && !now.Before(*p.Until) {
		return journal.Pause{}
	}
	return p
}
