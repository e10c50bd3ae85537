package ownership

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
)

// Takeover defaults (docs/design.md#36-takeover-handshake).
const (
	defaultTakeoverTimeout = 60 * time.Second // a person may have to click
	defaultWedgeThreshold  = 30 * time.Second
	takeoverPoll           = 50 * time.Millisecond
)

// Takeover asks the current owner to step aside and returns a Handle once this process owns. It
// writes takeover.json addressed to the owner's token, reports progress through t.Progress
// (Decision "pending" once the owner has seen the request), and tries the guard every 50 ms until
// t.Timeout (default 60 s). The owner's reply is only news for the person waiting: this process
// owns when, and only when, it gets the guard. With no owner it simply acquires.
//
// Errors: ErrDenied (wrapped, naming the owner: it said no); ErrTakeoverTimeout (wrapped, naming
// the owner: no yield before the deadline); ctx.Err(); with t.KillWedged, *NotWedgedError
// (errors.Is ErrNotWedged, with the reason) or the signal error, see killWedged, then
// *TakenError (errors.Is ErrTakenByOther: a standby won the guard) or ErrStillDraining (wrapped),
// see ownAfterKill; and those of Acquire except ErrOwned. In
// every case the request is withdrawn (takeover.json and its reply removed) before Takeover
// returns.
func Takeover(ctx context.Context, opts Options, t TakeoverOptions) (*Handle, error) {
	opts, err := normalize(opts)
	if err != nil {
		return nil, err
	}
	if t.Timeout <= 0 {
		t.Timeout = defaultTakeoverTimeout
	}
	if t.WedgeThreshold <= 0 {
		t.WedgeThreshold = defaultWedgeThreshold
	}
	c := &challenger{opts: opts, t: t, begun: time.Now(), obs: NewObserver(opts.Dir),
		w: newDirWatcher(opts.Dir, opts.Logger)}
	h, err := c.run(ctx)
	c.withdraw()
	if h == nil && err == nil {
		// Deadline: the owner may have yielded between our last try and the withdrawal (it checks
		// that the request still stands just before it unlocks); take what it handed over.
		h, err = tryAcquire(opts, c.w)
	}
	if h == nil {
		c.w.close()
	}
	if err != nil || h != nil {
		return h, err
	}
	if !t.KillWedged {
		return nil, fmt.Errorf("%w after %s: %s; try again when it is idle, or stop it",
			ErrTakeoverTimeout, t.Timeout, c.ownerLine())
	}
	return endWedged(ctx, opts, c.obs, t.WedgeThreshold, 0)
}

// challenger is the state of one Takeover call.
type challenger struct {
	opts     Options
	t        TakeoverOptions
	begun    time.Time
	obs      *Observer
	w        *dirWatcher // handed to the handle on success (see tryAcquire)
	req      *Request
	owner    *Record
	decision Decision
}

// run polls every takeoverPoll until this process owns (handle, nil), the owner denies
// (ErrDenied), writing the request fails, ctx ends (ctx.Err()), or the deadline passes (nil, nil).
// Each poll tries the guard, (re)addresses the request to the owner seen now, and reads the reply.
func (c *challenger) run(ctx context.Context) (*Handle, error) {
	deadline := c.begun.Add(c.t.Timeout)
	tick := time.NewTicker(takeoverPoll)
	defer tick.Stop()
	for {
		h, err := tryAcquire(c.opts, c.w)
		if err != nil || h != nil {
			return h, err
		}
		st, _ := c.obs.Observe()
		if err := c.address(st); err != nil {
			return nil, err
		}
		if err := c.readReply(); err != nil {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// address writes (or rewrites, when the owner changed) takeover.json for the owner described by
// st. While the owner record is unknown there is no token to address, so it waits.
func (c *challenger) address(st Status) error {
	r := st.Record
	if r == nil || !st.Held || !st.Alive || r.State == StateReleased {
		return nil // no live owner described yet: a new owner writes its record within moments
	}
	if c.req != nil && c.req.TargetToken == r.Token {
		return nil
	}
	id, host := self()
	req := &Request{
		ID: uuid.NewString(), TargetToken: r.Token,
		Requester: Requester{PID: id.PID, PIDStartMS: id.StartMS, PIDStartTicks: id.StartTicks,
			Host: host, UID: os.Getuid(), Role: c.opts.Role, Command: os.Args},
		RequestedAt: time.Now(), ExpiresAt: c.begun.Add(c.t.Timeout), Reason: c.t.Reason,
	}
	if err := writeJSONAtomic(c.opts.Dir, requestName, req, false); err != nil {
		return fmt.Errorf("write takeover request: %w", err)
	}
	c.req, c.owner, c.decision = req, r, ""
	c.report()
	return nil
}

// readReply reports a new answer from the owner to this challenger's request through Progress.
// It returns ErrDenied (wrapped, naming the owner) when the answer is "denied", else nil: an
// approval changes nothing here, since only the guard makes this process the owner.
func (c *challenger) readReply() error {
	rep := readReply(c.opts.Dir)
	if c.req == nil || rep == nil || rep.RequestID != c.req.ID || rep.Decision == c.decision {
		return nil
	}
	c.decision = rep.Decision
	c.report()
	if rep.Decision == DecisionDenied {
		return fmt.Errorf("%w: %s (by %s); it keeps the routines", ErrDenied, c.ownerLine(), rep.By)
	}
	return nil
}

// report calls TakeoverOptions.Progress, if set, with what the challenger knows now.
func (c *challenger) report() {
	if c.t.Progress != nil {
		c.t.Progress(TakeoverProgress{Owner: c.owner, Decision: c.decision, Waited: time.Since(c.begun)})
	}
}

// withdraw removes this challenger's request and reply (if still ours), whatever the outcome.
func (c *challenger) withdraw() {
	if c.req != nil {
		removeRequest(c.opts.Dir, c.req.ID)
		removeReply(c.opts.Dir, c.req.ID)
	}
}

// ownerLine names the owner for error messages.
func (c *challenger) ownerLine() string {
	if c.owner == nil {
		return "the owner is unknown (owner.json missing)"
	}
	return fmt.Sprintf("owned by %s pid %d on %s since %s, epoch %d", c.owner.Role, c.owner.PID,
		c.owner.Host, c.owner.AcquiredAt.Local().Format(time.RFC3339), c.owner.Epoch)
}
