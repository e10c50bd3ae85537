package scheduler

import "github.com/routinely/routinely/scheduler/config"

// Following the system time zone: routines without a timezone are armed in the zone read from
// e.zones, and re-armed when it changes (checked on every wake-watcher tick).

// applyInZone applies cfg with its system-zone routines in the current system zone. Errors:
// apply's.
func (e *Engine) applyInZone(cfg *config.Config) error {
	e.zoneMu.Lock()
	defer e.zoneMu.Unlock()
	z := e.systemZone()
	if err := e.apply(cfg.InZone(z)); err != nil {
		return err
	}
	e.mu.Lock()
	e.zone = z
	e.mu.Unlock()
	return nil
}

// checkZone re-arms the routines that follow the system zone when it has changed, then runs
// the catch-up pass (a slot of the new zone that passed unclaimed runs once or is recorded
// missed, never dropped silently). Slots already claimed are never re-run (the journal
// refuses the claim) and runs in flight go on: re-arming replaces gocron jobs, not runs. While
// the start's catch-up pass is pending it waits (a later tick applies the change): that pass
// checks the slots missed before this owner started in the zone they were missed in.
func (e *Engine) checkZone() {
	z, err := e.zones.Zone()
	if err != nil {
		// Keep the zone in use; a file being replaced is read again at the next tick.
		e.log.Debug("system time zone not read", "err", err)
		return
	}
	e.mu.Lock()
	cur, cfg, stopping, startPending := e.zone, e.cfg, e.stopping, e.startLast != nil
	e.mu.Unlock()
	if stopping || cfg == nil || startPending || (z.Loc == cur.Loc && z.Name == cur.Name) {
		return
	}
	e.log.Info("system time zone changed; re-arming the routines that follow it", "from", cur.Name, "to", z.Name)
	if err := e.applyInZone(cfg); err != nil {
		e.log.Error("re-arm after time zone change", "err", err)
		return
	}
	e.catchUpAll("system time zone changed")
}

// systemZone is the current system zone, or the one in use when it cannot be read (a file
// being replaced), or time.Local before any was read.
func (e *Engine) systemZone() config.Zone {
	if z, err := e.zones.Zone(); err == nil && z.Loc != nil {
		return z
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.zone.Loc != nil {
		return e.zone
	}
	return config.LocalZone
}
