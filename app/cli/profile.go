package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// This file is how commands reach the profile: its paths, routines.toml and journal. Observers
// (status, routines, history, preview, validate, paths) use lookup and the read-side helpers and
// never create a file; owners and commands that leave a request for the owner (daemon, run,
// pause, resume) use resolve.

// resolve returns the profile's paths, creating the state directory (0700) if needed. Errors are
// those of paths.Resolve: ownership.ErrUnsafeDir or a permission error (both exit 77), other I/O
// errors (1).
func (e *env) resolve() (paths.Paths, error) {
	return paths.Resolve(e.home)
}

// lookup returns the profile's paths without creating anything; exists is false when --home or
// ROUTINELY_HOME names a directory that does not exist. Errors as for resolve.
func (e *env) lookup() (p paths.Paths, exists bool, err error) {
	return paths.Lookup(e.home)
}

// profileConfig looks the profile up (creating nothing) and loads its routines.toml. Errors:
// errNoConfig when the file does not exist, config.ErrConfig when it cannot be read or parsed
// (both exit 78), and those of lookup.
func (e *env) profileConfig() (paths.Paths, *config.Config, error) {
	p, _, err := e.lookup()
	if err != nil {
		return paths.Paths{}, nil, err
	}
	cfg, err := loadConfig(p.Config, true)
	return p, cfg, err
}

// profileRoutine is profileConfig plus findRoutine(name).
func (e *env) profileRoutine(name string) (paths.Paths, *config.Config, *config.Routine, error) {
	p, cfg, err := e.profileConfig()
	if err != nil {
		return p, nil, nil, err
	}
	r, err := findRoutine(cfg, name)
	return p, cfg, r, err
}

// loadConfig reads and validates a routines file. A missing file is errNoConfig (exit 78) with
// what to do: for the profile's own file (profile true), where to put one. A file that does not
// parse is config.ErrConfig with FILE:LINE:COL; invalid routines are in cfg.Problems.
func loadConfig(path string, profile bool) (*config.Config, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && profile:
		return nil, fmt.Errorf("%w: %s does not exist.\nCopy examples/routines.toml there and edit it ('"+progName+" validate' checks it), or choose another profile with --home DIR", errNoConfig, path)
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s does not exist", errNoConfig, path)
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%w: %s is a directory; give the routines.toml file inside it", config.ErrConfig, path)
	}
	return config.LoadConfig(path)
}

// findRoutine returns the routine called name. Errors: config.ErrConfig (exit 78) when the
// routine exists but is disabled by a validation problem, naming FILE:LINE:COL;
// config.ErrUnknownRoutine (exit 1) listing the names there are otherwise.
func findRoutine(cfg *config.Config, name string) (*config.Routine, error) {
	names := make([]string, 0, len(cfg.Routines))
	for _, r := range cfg.Routines {
		if r.Name == name {
			return r, nil
		}
		names = append(names, r.Name)
	}
	for _, p := range cfg.Problems {
		if p.Routine == name {
			return nil, fmt.Errorf("%w: routine %q is disabled: %s.\nFix it in routines.toml ('"+progName+" validate' lists every problem)", config.ErrConfig, name, p)
		}
	}
	return nil, fmt.Errorf("%w: %q in %s (routines: %v); '"+progName+" routines' lists them", config.ErrUnknownRoutine, name, cfg.Path, names)
}

// requestJournal opens the journal of the profile to record a request for the owner (a pause or
// a resume) about routine name, or every routine when name is "" (then r is nil). It checks name
// against routines.toml first and never creates a profile directory that --home names but that
// does not exist; the caller closes the journal. Errors: those of profileRoutine, errNoConfig (78)
// for a missing profile, resolve's and the journal's.
func (e *env) requestJournal(name string) (r *config.Routine, j *journal.Journal, err error) {
	if name != "" {
		if _, _, r, err = e.profileRoutine(name); err != nil {
			return nil, nil, err
		}
	} else if p, exists, err := e.lookup(); err != nil {
		return nil, nil, err
	} else if !exists {
		return nil, nil, fmt.Errorf("%w: the profile directory %s does not exist; check --home", errNoConfig, p.State)
	}
	p, err := e.resolve()
	if err != nil {
		return nil, nil, err
	}
	j, err = openJournalCreate(p)
	return r, j, err
}

// openJournal opens the profile's journal read-only, for observers. It returns (nil, nil) when
// the journal does not exist yet (nothing has ever owned this profile): looking never creates
// or migrates it. Errors: the journal's, wrapped.
func openJournal(p paths.Paths) (*journal.Journal, error) {
	j, err := journal.OpenReadOnly(p.Journal)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, journal.ErrNotJournal):
		return nil, err // names the file and says what to do
	case err != nil:
		return nil, fmt.Errorf("open journal %s: %w", p.Journal, err)
	}
	return j, nil
}

// journalBackWait is how long a command waits for a missing journal.db to come back while an
// owner holds the guard (openJournalCreate): the owner notices a deleted journal within a
// heartbeat and puts it back once its runs in flight end.
const journalBackWait = 3 * time.Second

// openJournalCreate opens the journal, creating and migrating it if needed (SQLite makes that
// safe beside a running owner). For commands that leave requests for the owner: run, pause,
// resume. A journal.db missing while an owner holds the guard was deleted under it: the owner
// puts back the file it has open (docs/design.md §4.10), and one made here would meet the old
// -wal and be refused by the owner (journal-replaced) with the request in it; so it waits up to
// journalBackWait for the file and otherwise refuses. Errors: that refusal (exit 75, naming the
// owner and what to do); the journal's, wrapped.
func openJournalCreate(p paths.Paths) (*journal.Journal, error) {
	if _, err := os.Lstat(p.Journal); errors.Is(err, fs.ErrNotExist) {
		if st, _ := ownership.Inspect(p.State); st.Held && !waitForFile(p.Journal, journalBackWait) {
			return nil, withCode(ExitTempFail, fmt.Errorf("%s is missing while %s owns the routines: it puts back the journal it has open once its runs in flight end ('"+progName+" status' says journal-replaced until then); try again then",
				p.Journal, describeOwner(st.Record, time.Now())))
		}
	}
	j, err := journal.Open(p.Journal)
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", p.Journal, err)
	}
	return j, nil
}

// waitForFile reports whether path exists within wait, looking every 100 ms.
func waitForFile(path string, wait time.Duration) bool {
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Lstat(path); err == nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// inForce is the set of routines an observer shows: routines.toml's, or while the file cannot
// be used the last good version the owner recorded in the journal.
type inForce struct {
	cfg      *config.Config
	broken   *config.Problem   // routines.toml cannot be used (loadErr): cfg is its last good version
	lastGood *journal.LastGood // the record cfg comes from when broken
	loadErr  error             // why routines.toml cannot be used; cfg is nil when no last good version exists
}

// routinesInForce loads the profile's routines.toml (loadConfig) and, when it cannot be used,
// falls back on the last good version an owner recorded in j (scheduler.LastGoodFor; j may be
// nil: no journal yet, so no last good version).
func routinesInForce(p paths.Paths, j *journal.Journal) inForce {
	cfg, err := loadConfig(p.Config, true)
	if err == nil {
		return inForce{cfg: cfg}
	}
	good, broken, lg := scheduler.LastGoodFor(p.Config, j, err)
	return inForce{cfg: good, broken: broken, lastGood: lg, loadErr: err}
}

// lastGoodNote says, for a person, that the routines shown are the last good version: when it
// was applied and whether an owner runs it now (owned).
func lastGoodNote(lg *journal.LastGood, owned bool, now time.Time) string {
	at := lg.AppliedAt
	runs := "which the owner runs until the file is fixed"
	if !owned {
		runs = "which an owner runs once it starts, until the file is fixed"
	}
	return fmt.Sprintf("showing the last good version of the file (applied %s), %s", fmtTime(&at, now), runs)
}
