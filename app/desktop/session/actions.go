package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/routinely/routinely/app/autostart"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// pauseNote is recorded with a pause made from the app.
const pauseNote = "paused from the desktop app"

// RunNow asks the owner, whoever it is, to run routine now (through the journal, so it works in
// standby too; the owner picks the request up within a second).
func (s *Session) RunNow(routine string) error {
	j, err := s.obs.journal()
	if err != nil {
		return err
	}
	if _, err := j.RequestRun(routine); err != nil {
		return fmt.Errorf("run %s now: %w", routine, err)
	}
	s.poke()
	return nil
}

// SetPaused pauses or resumes routine ("" = all), through the journal like RunNow.
func (s *Session) SetPaused(routine string, paused bool) error {
	j, err := s.obs.journal()
	if err != nil {
		return err
	}
	if paused {
		err = j.SetPaused(routine, pauseNote, nil)
	} else {
		err = j.Resume(routine)
	}
	if err != nil {
		return fmt.Errorf("pause/resume %q: %w", routine, err)
	}
	s.poke()
	return nil
}

// TakeBack asks the current owner to hand the routines back (ignored unless standing by).
func (s *Session) TakeBack() {
	select {
	case s.takeBack <- struct{}{}:
	default:
	}
}

// EndStuckOwner ends the owner pid, which has stopped heartbeating, and makes this app the
// owner (the window's "End the stuck owner" after the person confirmed). It returns at once;
// the outcome shows in the snapshots (the mode, or a notice saying why it failed). It returns
// ErrNotStandingBy (wrapped) when this app is not standing by, and ErrNotStuck (wrapped) when the
// latest snapshot offers no stuck owner pid to end.
func (s *Session) EndStuckOwner(pid int) error {
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	if mode != ModeStandby {
		return fmt.Errorf("end the stuck owner (pid %d): %w", pid, ErrNotStandingBy)
	}
	if st := s.stuck(); st == nil || st.PID != pid || st.Refused != "" || st.EndableIn > 0 {
		return fmt.Errorf("end the stuck owner (pid %d): %w", pid, ErrNotStuck)
	}
	select {
	case s.endStuck <- pid:
	default: // one is being handled already
	}
	return nil
}

// Stopping shows that the app is quitting while the caller cancels Run's context.
func (s *Session) Stopping() { s.setMode(ModeStopping) }

// SetStartAtLogin installs or removes the login item for this binary.
func (s *Session) SetStartAtLogin(on bool) error {
	var err error
	if on {
		_, err = s.opts.Autostart.Enable(s.opts.Executable)
	} else {
		_, err = s.opts.Autostart.Disable()
	}
	state := s.readAutostart()
	s.mu.Lock()
	s.autostart = state
	s.mu.Unlock()
	s.poke()
	if err != nil {
		return fmt.Errorf("start at login: %w", err)
	}
	return nil
}

// readAutostart reports whether the login item is on and starts this binary.
func (s *Session) readAutostart() bool {
	st, err := s.opts.Autostart.Current(s.opts.Executable)
	if err != nil {
		s.logger.Debug("login item state unknown", "err", err)
		return false
	}
	return st.State == autostart.Enabled && st.PointsHere
}

// refreshAutostart points an enabled login item at this binary when it has moved (an update
// installed elsewhere), as the autostart contract asks of the app at start-up; it never turns the
// item on. A binary under the temporary directory (go run, go test) leaves the item alone.
func (s *Session) refreshAutostart() bool {
	exe := s.opts.Executable
	if exe == "" || underTempDir(exe) {
		return s.readAutostart()
	}
	st, err := s.opts.Autostart.Refresh(exe)
	if err != nil {
		s.logger.Warn("could not point the login item at this binary", "err", err)
		return s.readAutostart()
	}
	return st.State == autostart.Enabled && st.PointsHere
}

// underTempDir reports whether path lies in the temporary directory.
func underTempDir(path string) bool {
	rel, err := filepath.Rel(filepath.Clean(os.TempDir()), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// SetPolicy saves how takeover requests are answered (allow, deny or ask) and hands it to the
// ownership handle while this app owns; it applies to the next request. It returns
// ownership.ErrUnknownPolicy (wrapped) for another value, or the error saving the settings;
// nothing changes then.
func (s *Session) SetPolicy(p ownership.Policy) error {
	switch p {
	case ownership.PolicyAllow, ownership.PolicyDeny, ownership.PolicyAsk:
	default:
		return fmt.Errorf("takeover policy %q: %w", p, ownership.ErrUnknownPolicy)
	}
	s.mu.Lock()
	next := s.settings
	next.TakeoverPolicy = p
	s.mu.Unlock()
	if err := SaveSettings(s.opts.Paths.State, next); err != nil {
		return err
	}
	s.mu.Lock()
	s.settings = next
	if s.handle != nil {
		_ = s.handle.SetPolicy(p) // p is valid: checked above
	}
	s.mu.Unlock()
	s.poke()
	return nil
}

// Settings returns the current settings.
func (s *Session) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// History returns routine's runs, newest first.
func (s *Session) History(routine string, limit int) ([]journal.Run, error) {
	j, err := s.obs.journal()
	if err != nil {
		return nil, err
	}
	runs, err := j.History(routine, limit)
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", routine, err)
	}
	return runs, nil
}

// Output returns a run's captured output.
func (s *Session) Output(runID int64) ([]byte, error) {
	j, err := s.obs.journal()
	if err != nil {
		return nil, err
	}
	out, err := j.Output(runID)
	if err != nil {
		return nil, fmt.Errorf("output of run %d: %w", runID, err)
	}
	return out, nil
}
