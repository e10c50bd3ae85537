package ownership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
)

// waitPoll is how often the challenger paths that must also watch something else (kill-wedged's
// wait for the guard, awaitSuccessor) try the guard. A standby does not poll: it blocks in the
// kernel (waitGuard).
const waitPoll = 20 * time.Millisecond

// heldHere lists the state directories this process owns. flock(2) locks belong to open file
// descriptions, so a second Acquire in the same process would otherwise see a foreign holder.
var (
	heldMu   sync.Mutex
	heldHere = map[string]bool{}
)

// Acquire tries once, without waiting, to take the guard of opts.Dir. It returns a Handle that
// owns (epoch durably stored, owner.json written, heartbeat running), or an error: *OwnedError
// (errors.Is ErrOwned) naming the holder when another process holds the guard; ErrHeldInProcess
// when this process already owns; ErrUnsafeDir (wrapped) for an unsafe directory; ctx.Err() when
// ctx has already ended; the error of Options.EpochFloor (wrapped); or an I/O error (wrapped)
// when the directory, the guard or the epoch file cannot be used.
func Acquire(ctx context.Context, opts Options) (*Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts, err := normalize(opts)
	if err != nil {
		return nil, err
	}
	w := newDirWatcher(opts.Dir, opts.Logger)
	h, err := tryAcquire(opts, w)
	if h != nil {
		return h, nil
	}
	w.close()
	if err != nil {
		return nil, err
	}
	return nil, ownedError(opts.Dir)
}

// Bounds of the backoff with which Wait retries while Options.EpochFloor reports its source
// unavailable (ErrEpochFloorUnavailable): each try holds the guard for as long as EpochFloor
// takes, so the tries are spaced out, but never so far that the standby owns long after the
// journal is free again.
const (
	floorRetryMin = 100 * time.Millisecond
	floorRetryMax = 2 * time.Second
)

// Wait stands by until this process owns opts.Dir, and returns the Handle; or it returns
// ctx.Err() when ctx ends first. It waits blocked on the guard (waitGuard), so the kernel wakes it
// the moment the owner lets go or dies (docs/design.md#35-standby-wait). When the guard is free
// but Options.EpochFloor reports its source unavailable for now (ErrEpochFloorUnavailable), it
// lets the guard go, logs, and tries again with a backoff from 100 ms to 2 s. Other errors as for
// Acquire, except ErrOwned: a held guard is what it waits out.
func Wait(ctx context.Context, opts Options) (*Handle, error) {
	opts, err := normalize(opts)
	if err != nil {
		return nil, err
	}
	w := newDirWatcher(opts.Dir, opts.Logger) // before the guard descriptor: see tryAcquire
	backoff := floorRetryMin
	for {
		h, err := waitAcquire(ctx, opts, w)
		if h != nil {
			return h, nil
		}
		if errors.Is(err, ErrEpochFloorUnavailable) {
			opts.Logger.Warn("standing by: the guard is free but the journal cannot be read yet; trying again", "in", backoff, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, floorRetryMax)
			continue
		}
		w.close()
		return nil, err
	}
}

// waitAcquire is tryAcquire that waits for the guard (waitGuard) instead of giving up when it
// is held. It returns the Handle, or ctx.Err(), ErrHeldInProcess, or the errors of waitGuard and
// startOwning. On success the handle takes over w; otherwise the caller keeps it.
func waitAcquire(ctx context.Context, o Options, w *dirWatcher) (*Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ownedHere(o.Dir) {
		return nil, fmt.Errorf("%w (%s)", ErrHeldInProcess, o.Dir) // the lock would never come
	}
	g, err := waitGuard(ctx, o.Dir)
	if err != nil {
		return nil, err
	}
	return ownGuard(o, g, w)
}

// waitGuard blocks until this process holds the guard of dir (blockGuard) or ctx ends, and
// returns the guard, ctx.Err(), or blockGuard's error.
//
// A blocked flock(2) or LockFileEx cannot be interrupted, so it runs in its own goroutine, which
// hands the guard over on an unbuffered channel: either waitGuard receives it, or ctx has ended
// and the goroutine lets it go at once. Exactly one side ends up with the lock, never none (a
// leaked lock would stall every standby) and never both. This is safe: until its result is
// received, the goroutine's lock is a bare lock on owner.lock with no epoch, no record and no
// engine behind it, so for the rest of the world it is a standby that won and left within
// microseconds; the next waiter (blocked in the kernel, or polling) takes it then. Until the
// guard comes free, a cancelled wait keeps one blocked thread and one descriptor.
func waitGuard(ctx context.Context, dir string) (*guard, error) {
	type locked struct {
		g   *guard
		err error
	}
	got := make(chan locked)
	go func() {
		g, err := blockGuard(dir)
		select {
		case got <- locked{g, err}:
		case <-ctx.Done():
			if g != nil {
				_ = g.release()
			}
		}
	}()
	select {
	case r := <-got:
		return r.g, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// normalize fills the defaults of o and replaces o.Dir by its canonical path (symlinks
// resolved). Errors: ErrUnsafeDir (wrapped) when no directory is given or it is unsafe (see
// checkDirSafe); the error (wrapped) of resolving a directory that does not exist.
func normalize(o Options) (Options, error) {
	if o.Dir == "" {
		return o, fmt.Errorf("%w: no state directory given (resolve it with StateDir)", ErrUnsafeDir)
	}
	dir, err := filepath.EvalSymlinks(o.Dir)
	if err != nil {
		return o, fmt.Errorf("state directory %s: %w", o.Dir, err)
	}
	if err := checkDirSafe(dir); err != nil {
		return o, err
	}
	o.Dir = dir
	self()           // learn this process's identity now, not on a standby's crash-recovery path
	prepareGuardFD() // and grow the descriptor table for the guard's (guardlock_linux.go)
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = DefaultHeartbeat
	}
	if o.Policy == "" {
		o.Policy = PolicyAllow
	}
	if o.Role == "" {
		o.Role = RoleDaemon
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// tryAcquire makes one attempt: (handle, nil) when this process now owns, (nil, nil) when the
// guard is held elsewhere, or an error. On success the handle takes over w (the owner's file
// watch); otherwise the caller keeps it.
//
// w is created before the guard descriptor, so its number is the lower and it is released later
// when this process dies (the highest-numbered file is released first); on Linux the guard's
// descriptor is placed above all others anyway (fdLock), whatever the owner opened after it.
func tryAcquire(o Options, w *dirWatcher) (*Handle, error) {
	if ownedHere(o.Dir) {
		return nil, fmt.Errorf("%w (%s)", ErrHeldInProcess, o.Dir)
	}
	g, err := tryGuard(o.Dir)
	if err != nil || g == nil {
		return nil, err
	}
	return ownGuard(o, g, w)
}

// ownedHere reports whether this process owns dir already.
func ownedHere(dir string) bool {
	heldMu.Lock()
	defer heldMu.Unlock()
	return heldHere[dir]
}

// ownGuard turns the locked guard g into this process's Handle (startOwning) and registers dir
// as owned here. It returns the Handle, or ErrHeldInProcess or startOwning's error, having let
// g go. On success the handle takes over w.
func ownGuard(o Options, g *guard, w *dirWatcher) (*Handle, error) {
	heldMu.Lock()
	defer heldMu.Unlock()
	if heldHere[o.Dir] {
		_ = g.release()
		return nil, fmt.Errorf("%w (%s)", ErrHeldInProcess, o.Dir)
	}
	h, err := startOwning(o, g, w)
	if err != nil {
		_ = g.release()
		return nil, err
	}
	heldHere[o.Dir] = true
	return h, nil
}

// startOwning turns a freshly locked guard into an owner (docs/design.md#32-acquire): the durable
// epoch first, then the record (so a challenger can address this owner as soon as Acquire
// returns), then the heartbeat loop, whose first act is making the record durable. The fsyncs of
// the record stay off the caller's path to keep crash recovery fast: the guard, not the record,
// decides. Errors: those of Options.EpochFloor (wrapped) and of storing the epoch.
func startOwning(o Options, g *guard, w *dirWatcher) (*Handle, error) {
	prev, _ := readRecord(o.Dir) // torn or missing: the epoch file and the journal still bound it
	var floor uint64
	if o.EpochFloor != nil {
		f, err := o.EpochFloor()
		if err != nil {
			return nil, fmt.Errorf("read highest journal epoch: %w", err)
		}
		floor = f
	}
	epoch, err := nextEpoch(o.Dir, prev, floor, o.Logger)
	if err != nil {
		return nil, err
	}
	removeStaleTemps(o.Dir)
	id, host := self()
	now := time.Now()
	h := &Handle{
		dir: o.Dir, opts: o, log: o.Logger.With("component", "ownership"), guard: g,
		token: uuid.NewString(), epoch: epoch, interval: o.HeartbeatInterval,
		phase:    phaseOwning,
		policy:   o.Policy,
		idle:     make(chan struct{}),
		denied:   map[string]bool{},
		events:   make(chan Event, eventBuffer),
		lost:     make(chan struct{}),
		wake:     make(chan struct{}, 1),
		loopDone: make(chan struct{}),
	}
	close(h.idle)
	h.rec = Record{
		Token: h.token, Epoch: epoch, PID: id.PID, PIDStartMS: id.StartMS, PIDStartTicks: id.StartTicks,
		Host: host, UID: os.Getuid(), Role: o.Role, Version: o.Version, Command: os.Args,
		AcquiredAt: now, HeartbeatAt: now, HeartbeatIntervalMS: o.HeartbeatInterval.Milliseconds(),
		State: StateOwning,
	}
	h.writeRecord(false)
	if o.OnRequest != nil {
		h.asks = make(chan Request, eventBuffer)
		go h.deliverAsks()
	}
	h.logOwnership("acquired")
	go h.loop(w)
	return h, nil
}

// unregister forgets that this process owns dir.
func unregister(dir string) {
	heldMu.Lock()
	defer heldMu.Unlock()
	delete(heldHere, dir)
}

// ownedError describes the current holder for a refused attempt. The record names the holder
// only when it is believable: its process is alive with the recorded start time, it has not
// released, and (Linux) it is the process /proc/locks names. Otherwise Holder is nil ("unknown").
func ownedError(dir string) error {
	st, err := Inspect(dir)
	if err != nil {
		return &OwnedError{}
	}
	oe := &OwnedError{Status: st}
	if r := st.Record; r != nil && st.Alive && r.State != StateReleased &&
		(st.HolderPID == 0 || st.HolderPID == r.PID) {
		oe.Holder = r
	}
	return oe
}
