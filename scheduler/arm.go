package scheduler

import (
	"fmt"
	"time"

	"github.com/routinely/routinely/scheduler/config"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
)

// armed is one routine as this engine runs it: its gocron job and its run state.
type armed struct {
	r          *config.Routine
	sched      config.Schedule
	firstArmed time.Time // catch-up never looks before it
	lastSlot   time.Time // latest slot handled: dispatched or recorded by catch-up (or the arm time)
	dispatched time.Time // latest scheduled slot handed to dispatch; dispatch drops any not after it
	job        uuid.UUID
	// refused holds scheduled slots handed to dispatch whose run the gate then refused (the
	// owner was yielding to a takeover): not claimed, so not handled. The next owner's catch-up
	// handles them, or, when the request is withdrawn and this owner resumes, its own
	// (catchUpRefused). Never both: a released owner never admits again.
	refused []time.Time

	running *inflight  // the run in progress, if any
	pending *slotEvent // overlap=queue/replace: the one run waiting for it
}

// slotEvent is one slot (or run-now request) to handle.
type slotEvent struct {
	slot      time.Time
	key       string // "" → slotKey(slot)
	trigger   string
	requestID int64
	device    string // the device that claimed the slot on the hub, when not this one
}

// apply makes cfg the running set: unchanged routines keep their timers, changed ones are
// re-armed, removed ones are disarmed. Runs in flight are never cancelled by a config change.
func (e *Engine) apply(cfg *config.Config) error {
	e.catchUps.setMax(cfg.MaxParallelCatchUp)
	now := e.clock.Now()
	shared := e.hubAnchors(cfg, now) // before e.mu: it asks the hub
	e.mu.Lock()
	defer e.mu.Unlock()
	var changed []*config.Routine
	every := map[string]time.Duration{}
	for _, r := range cfg.Routines {
		if old := e.routines[r.Name]; old != nil && config.SameDefinition(old.r, r) {
			r.Anchor = old.r.Anchor
			old.r = r
			continue
		}
		changed = append(changed, r)
		every[r.Name] = r.Every
	}
	info, err := e.j.Arm(every, now)
	if err != nil {
		return err
	}
	recent, err := e.j.AllRecentOutcomes(10)
	if err != nil {
		return err
	}
	moved := map[string]time.Time{}
	for _, r := range changed {
		in := info[r.Name]
		if r.Kind == config.KindEvery {
			if a, ok := shared[r.Name]; ok && !a.Equal(in.Anchor) {
				in.Anchor, moved[r.Name] = a, a
			}
			r.Anchor = in.Anchor
		}
		a := e.routines[r.Name]
		if a == nil {
			a = &armed{}
			e.routines[r.Name] = a
			// Restore the alert state so a handoff neither re-announces nor forgets a failure.
			if len(recent[r.Name]) > 0 {
				e.alerts.Seed(r.Name, recent[r.Name])
			}
		}
		a.r, a.sched, a.firstArmed = r, r.Slots(in.Anchor), in.FirstArmed
		if a.lastSlot.IsZero() {
			a.lastSlot = now
		}
		e.alerts.SetNotifyOn(r.Name, r.NotifyOn)
		if err := e.armLocked(a); err != nil {
			return err
		}
	}
	if err := e.j.SetAnchors(moved); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, r := range cfg.Routines {
		keep[r.Name] = true
	}
	for name, a := range e.routines {
		if !keep[name] {
			e.disarmLocked(a)
			delete(e.routines, name)
			e.alerts.Forget(name)
		}
	}
	if e.cfg != nil && !sameHub(e.cfg.Hub, cfg.Hub) {
		e.log.Warn("[hub] changed in routines.toml: it applies when the owner starts again (restart it)")
	}
	e.cfg, e.problems = cfg, cfg.Problems
	e.publishDefinitions(cfg)
	return nil
}

// armLocked (re)creates a's gocron job from the current wall clock. A fresh job computes its
// first timer from now, which is how a wake re-arms without gocron's Update (that would cancel
// running jobs). The job's task only hands the slot to the engine; runs live in their own
// goroutines, so removing a job never touches a run.
func (e *Engine) armLocked(a *armed) error {
	e.disarmLocked(a)
	name := a.r.Name
	timing := cronAdapter{s: a.sched, lead: claimLead}
	opts := []gocron.JobOption{
		gocron.WithCronImplementation(timing),
		gocron.WithName(name),
		// Our slot computation already runs non-existent wall times at the transition; this
		// keeps gocron from moving them anywhere else (its default runs 02:30 at 01:30).
		gocron.WithDaylightSavingsTimePolicy(gocron.DaylightSavingsTimeRunAfterTransition),
		gocron.WithEventListeners(gocron.AfterJobRunsWithPanic(func(_ uuid.UUID, job string, v any) {
			e.log.Error("scheduler task panicked", "routine", job, "panic", fmt.Sprint(v))
		})),
	}
	if timing.startsAtOnce(e.clock.Now()) {
		opts = append(opts, gocron.WithStartAt(gocron.WithStartImmediately()))
	}
	j, err := e.sched.NewJob(gocron.CronJob(name, false), gocron.NewTask(e.fire, name), opts...)
	if err != nil {
		return fmt.Errorf("arm %s: %w", name, err)
	}
	a.job = j.ID()
	return nil
}

func (e *Engine) disarmLocked(a *armed) {
	if a.job != uuid.Nil && e.sched != nil {
		_ = e.sched.RemoveJob(a.job)
		a.job = uuid.Nil
	}
}

// rearmAll re-creates every routine's timer from the current wall clock (after a wake or a
// clock jump).
func (e *Engine) rearmAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		return
	}
	for _, a := range e.routines {
		if err := e.armLocked(a); err != nil {
			e.log.Error("re-arm after clock jump", "routine", a.r.Name, "err", err)
		}
	}
}
