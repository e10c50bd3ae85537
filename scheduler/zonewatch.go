package scheduler

// Following the system time zone: routines without a timezone are armed in the zone read from
// e.zones, and re-armed when it changes (checked on every wake-watcher tick).

// applyInZone applies cfg with its system-zone routines in the current system zone. Errors:
// apply's.
func (e *Engine) applyInZone(cfg *Config) error {
	e.zoneMu.Lock()
	defer e.zoneMu.Unlock()
	z := e.systemZone()
	if err := e.apply(localized(cfg, z)); err != nil {
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
	if stopping || cfg == nil || startPending || (z.loc == cur.loc && z.name == cur.name) {
		return
	}
	e.log.Info("system time zone changed; re-arming the routines that follow it", "from", cur.name, "to", z.name)
	if err := e.applyInZone(cfg); err != nil {
		e.log.Error("re-arm after time zone change", "err", err)
		return
	}
	e.catchUpAll("system time zone changed")
}

// systemZone is the current system zone, or the one in use when it cannot be read (a file
// being replaced), or time.Local before any was read.
func (e *Engine) systemZone() zone {
	if z, err := e.zones.Zone(); err == nil && z.loc != nil {
		return z
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.zone.loc != nil {
		return e.zone
	}
	return localZone
}

// localized returns cfg with its system-zone routines in z. A routine whose zone differs is
// copied (the running set's routines are read by runs in flight, so they are never modified);
// the others are shared.
func localized(cfg *Config, z zone) *Config {
	out := *cfg
	out.Routines = make([]*Routine, len(cfg.Routines))
	for i, r := range cfg.Routines {
		if r.systemZone && (r.Location != z.loc || r.Timezone != z.name) {
			c := *r
			c.Timezone, c.Location = z.name, z.loc
			if cs, ok := r.sched.(*calendarSchedule); ok {
				c.sched = &calendarSchedule{specs: cs.specs, loc: z.loc}
			}
			r = &c
		}
		out.Routines[i] = r
	}
	return &out
}
