package scheduler

// CONTRACT FILE: the functions app/cli and app/desktop call. The scheduler implementer fills the
// bodies in files with one job each and deletes the stubs; signatures change only with callers.

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"
)

var errTODO = errors.New("scheduler: not implemented yet")

// Gate is the slice of *ownership.Handle the engine needs (ownership.Handle satisfies it).
type Gate interface {
	Epoch() uint64
	Admitting() bool
	BeginRun(routine string, slot time.Time) (done func(), err error)
	NoteTick(nextDue time.Time)
}

// Config is a validated routines.toml: the valid routines and the problems of the invalid ones.
type Config struct {
	Path     string
	Routines []*Routine
	Problems []Problem
}

// Routine is one validated routine. (Fields are the implementer's; see routines.toml schema.)
type Routine struct {
	Name string
}

// LoadConfig reads and validates path. A file that cannot be read or parsed returns an error
// wrapping ErrConfig whose text starts with "FILE:LINE:COL:". Invalid routines are left out of
// Routines and reported in Problems; valid ones are returned.
func LoadConfig(path string) (*Config, error) { return nil, errTODO }

// Preview returns the next n slots of r strictly after from, computed by the code that arms the
// timers.
func Preview(r *Routine, from time.Time, n int) ([]time.Time, error) { return nil, errTODO }

// Journal is the SQLite run journal (WAL; readable by any process while the owner writes).
type Journal struct{}

// OpenJournal opens (creating and migrating) the journal at path.
func OpenJournal(path string) (*Journal, error) { return nil, errTODO }

// Close closes the database.
func (j *Journal) Close() error { return nil }

// MaxEpoch returns the highest owner epoch recorded (0 for a new journal).
func (j *Journal) MaxEpoch() (uint64, error) { return 0, errTODO }

// History returns up to limit runs, newest first; routine "" means all routines.
func (j *Journal) History(routine string, limit int) ([]Run, error) { return nil, errTODO }

// Output returns a run's captured output (ErrNoRun if unknown).
func (j *Journal) Output(runID int64) ([]byte, error) { return nil, errTODO }

// RequestRun records a run-now request that the owner picks up within 1 s; returns its id.
func (j *Journal) RequestRun(routine string) (int64, error) { return 0, errTODO }

// RequestResult reports the run a run-now request became (runID 0 while still pending).
func (j *Journal) RequestResult(requestID int64) (runID int64, err error) { return 0, errTODO }

// SetPaused pauses routine ("" = all) with an optional note and end time (nil: until resumed).
func (j *Journal) SetPaused(routine, note string, until *time.Time) error { return errTODO }

// Resume clears a pause on routine ("" = all).
func (j *Journal) Resume(routine string) error { return errTODO }

// States returns what observers show for each routine of cfg at now, from the journal alone
// (used by `routinely status`/`routines` and the app in standby).
func States(cfg *Config, j *Journal, now time.Time) ([]RoutineState, error) { return nil, errTODO }

// EngineOptions wire an Engine.
type EngineOptions struct {
	ConfigPath string
	Journal    *Journal
	Gate       Gate
	Clock      clockwork.Clock // nil → real clock
	Notifier   Notifier
	Logger     *slog.Logger
}

// Engine schedules the routines of one owner.
type Engine struct{}

// NewEngine builds an engine; it does not start anything.
func NewEngine(opts EngineOptions) (*Engine, error) { return nil, errTODO }

// Start loads the config, runs the catch-up pass, arms every routine, and starts the config
// watcher, the wake watcher and the run-request poller. A config that does not parse is an error
// wrapping ErrConfig only when there is no last good set.
func (e *Engine) Start(ctx context.Context) error { return errTODO }

// Stop stops admitting runs and waits for in-flight runs to end (or ctx).
func (e *Engine) Stop(ctx context.Context) error { return errTODO }

// Routines returns the current state of every routine (including disabled ones).
func (e *Engine) Routines() []RoutineState { return nil }

// Problems returns the last validation problems of routines.toml.
func (e *Engine) Problems() []Problem { return nil }
