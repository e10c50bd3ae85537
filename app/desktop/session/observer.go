package session

import (
	"context"
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
	cfgStamp fileStamp
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

// journal opens the run journal on first use (it is shared with the owner through WAL).
func (o *observer) journal() (*journal.Journal, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.j != nil {
		return o.j, nil
	}
	j, err := journal.Open(o.p.Journal)
	if err != nil {
		return nil, fmt.Errorf("open the run journal: %w", err)
	}
	o.j = j
	return j, nil
}

// config returns the parsed routines file, reparsing only when it changed on disk.
func (o *observer) config() (*config.Config, error) {
	st := stamp(o.p.Config)
	o.mu.Lock()
	defer o.mu.Unlock()
	if (o.cfg != nil || o.cfgErr != nil) && st == o.cfgStamp {
		return o.cfg, o.cfgErr
	}
	o.cfg, o.cfgErr = config.LoadConfig(o.p.Config)
	o.cfgStamp = st
	return o.cfg, o.cfgErr
}

// routines computes what an observer shows for each routine from the config and the journal.
func (o *observer) routines(now time.Time) ([]scheduler.RoutineState, []config.Problem, string) {
	cfg, err := o.config()
	if err != nil {
		return nil, nil, err.Error()
	}
	j, err := o.journal()
	if err != nil {
		return nil, cfg.Problems, err.Error()
	}
	states, err := scheduler.States(cfg, j, now)
	if err != nil {
		return nil, cfg.Problems, fmt.Sprintf("read routine states: %v", err)
	}
	return states, cfg.Problems, ""
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
