package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// observer reads what any process may read: the owner record and diagnoses, the routines file
// and the journal. It caches the parsed config until the file changes.
type observer struct {
	p     paths.Paths
	owner *ownership.Observer

	mu       sync.Mutex
	j        *journal.Journal
	cfg      *config.Config
	cfgErr   error
	broken   *config.Problem // the file cannot be used and cfg is its last good version
	cfgStamp fileStamp
	states   scheduler.StatesCache // reads the journal only when it changed
}

type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func newObserver(p paths.Paths) *observer {
	return &observer{p: p, owner: ownership.NewObserver(p.State)}
}

func stamp(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

// journal opens the run journal on first use (it is shared with the owner through WAL), and
// again once journal.db is no longer the file it opened (deleted and put back by the owner,
// docs/design.md §4.10): a request written into the deleted file would be lost. While the path
// is empty it makes no journal of its own (the owner's put-back would find the path taken).
// Errors: the open's, wrapped; while journal.db is missing, one wrapping journal.ErrReplaced.
func (o *observer) journal() (*journal.Journal, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.j != nil {
		err := o.j.Intact()
		if !errors.Is(err, journal.ErrReplaced) {
			return o.j, nil
		}
		_ = o.j.Close()
		o.j = nil
		if _, serr := os.Lstat(o.p.Journal); serr != nil {
			return nil, fmt.Errorf("the run journal: %w; the owner puts it back once its runs in flight end", err)
		}
	}
	j, err := journal.Open(o.p.Journal)
	if err != nil {
		return nil, fmt.Errorf("open the run journal: %w", err)
	}
	o.j = j
	return j, nil
}

// config returns the routines in force: the parsed routines file, or while it cannot be used
// the last good version the owner recorded in the journal (scheduler.LoadOrLastGood), with the
// file's problem. It reparses only when the file changed on disk: the owner records a new last
// good version only when it applies a file that parses, which is a change of the file.
func (o *observer) config() (*config.Config, *config.Problem, error) {
	st := stamp(o.p.Config)
	o.mu.Lock()
	if (o.cfg != nil || o.cfgErr != nil) && st == o.cfgStamp {
		defer o.mu.Unlock()
		return o.cfg, o.broken, o.cfgErr
	}
	o.mu.Unlock()
	j, jerr := o.journal()
	if jerr != nil {
		j = nil
	}
	cfg, broken, _, err := scheduler.LoadOrLastGood(o.p.Config, j)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cfg, o.cfgErr, o.broken, o.cfgStamp = cfg, err, broken, st
	return cfg, broken, err
}

// shown is what an observer shows of the routines (observer.routines).
type shown struct {
	states   []scheduler.RoutineState
	problems []config.Problem
	err      string          // the whole-file error, or why the states could not be read
	broken   *config.Problem // the file cannot be used: states are its last good version
	lastGood bool
}

// routines computes what an observer shows for each routine from the config in force and the
// journal.
func (o *observer) routines(now time.Time) shown {
	cfg, broken, err := o.config()
	if err != nil {
		p := config.ProblemOf(o.p.Config, err)
		return shown{err: err.Error(), broken: &p}
	}
	v := shown{problems: cfg.Problems}
	if broken != nil {
		v = shown{err: broken.String(), broken: broken, lastGood: true}
	}
	j, err := o.journal()
	if err != nil {
		v.err = err.Error()
		return v
	}
	states, err := o.states.States(cfg, j, now)
	if err != nil {
		v.err = fmt.Sprintf("read routine states: %v", err)
		return v
	}
	v.states = states
	return v
}

// status is what an observer knows about ownership now.
func (o *observer) status() (ownership.Status, error) {
	st, err := o.owner.Observe()
	if err != nil {
		return st, fmt.Errorf("inspect ownership: %w", err)
	}
	return st, nil
}

// waitConfigChange returns when the routines file changes or ctx ends.
func (o *observer) waitConfigChange(ctx context.Context) {
	before := stamp(o.p.Config)
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if stamp(o.p.Config) != before {
				return
			}
		}
	}
}

func (o *observer) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.j != nil {
		o.j.Close()
		o.j = nil
	}
}
