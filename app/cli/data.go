package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/scheduler"
)

// openJournal opens the profile's journal for reading. It returns (nil, nil) when the journal
// does not exist yet (nothing has ever owned this profile), so history can say so.
func openJournal(p paths.Paths) (*scheduler.Journal, error) {
	if _, err := os.Stat(p.Journal); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	j, err := scheduler.OpenJournal(p.Journal)
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", p.Journal, err)
	}
	return j, nil
}

// openJournalCreate opens the journal, creating and migrating it if needed (SQLite makes that
// safe beside a running owner). Used by commands that record requests for the owner (pause,
// resume, run) and by status/routines, which compute states from it.
func openJournalCreate(p paths.Paths) (*scheduler.Journal, error) {
	j, err := scheduler.OpenJournal(p.Journal)
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", p.Journal, err)
	}
	return j, nil
}

// loadConfig reads the profile's routines.toml. A missing file is explained with where to put it.
func loadConfig(path string) (*scheduler.Config, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist: create it (examples/routines.toml is a start) or choose a profile with --home", scheduler.ErrConfig, path)
	}
	return scheduler.LoadConfig(path)
}

// findRoutine returns the routine called name, or an error listing the names there are.
func findRoutine(cfg *scheduler.Config, name string) (*scheduler.Routine, error) {
	names := make([]string, 0, len(cfg.Routines))
	for _, r := range cfg.Routines {
		if r.Name == name {
			return r, nil
		}
		names = append(names, r.Name)
	}
	for _, p := range cfg.Problems {
		if p.Routine == name {
			return nil, fmt.Errorf("%w: %q is disabled: %s:%d:%d: %s", scheduler.ErrUnknownRoutine, name, p.File, p.Line, p.Col, p.Message)
		}
	}
	return nil, fmt.Errorf("%w: %q in %s (routines: %v)", scheduler.ErrUnknownRoutine, name, cfg.Path, names)
}

// routineStates returns what observers show for each routine, from the config and journal.
func routineStates(cfg *scheduler.Config, j *scheduler.Journal, e *env) ([]scheduler.RoutineState, error) {
	states, err := scheduler.States(cfg, j, e.now())
	if err != nil {
		return nil, fmt.Errorf("routine states: %w", err)
	}
	return states, nil
}
