package action

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/routinely/routinely/internal/redact"
)

// DefaultKillGrace is how long a run/shell child has between SIGTERM and SIGKILL.
const DefaultKillGrace = 5 * time.Second

// Deps are the services actions use. The engine builds one Deps and passes it to New for every
// routine.
type Deps struct {
	// Notifier shows notify actions' notifications. Required by notify.
	Notifier Notifier
	// Snapshots stores page-watch snapshots. Required by watch.
	Snapshots SnapshotStore
	// HTTPClient makes watch and ping requests; nil means one client shared by every action
	// built with a nil HTTPClient (a clone of http.DefaultTransport, so connections are pooled
	// across runs). Timeouts come from the run's context, not from the client.
	HTTPClient *http.Client
	// UserAgent is sent by watch and ping unless a header overrides it; "" means
	// UserAgent("dev").
	UserAgent string
	// KillGrace is the time between SIGTERM and SIGKILL for run/shell; 0 means
	// DefaultKillGrace. Tests shorten it.
	KillGrace time.Duration
}

// UserAgent returns the User-Agent Routinely sends, e.g.
// "Routinely/1.2.0 (+local routine runner)" for version "1.2.0".
func UserAgent(version string) string {
	return "Routinely/" + version + " (+local routine runner)"
}

// New builds the action for spec, which is one of RunSpec, ShellSpec, WatchSpec, NotifySpec,
// PingSpec or a pointer to one. It validates spec first.
//
// Errors: ErrInvalidSpec (wrapping the FieldErrors' messages) when Validate reports problems;
// ErrUnknownSpec for any other type or a nil pointer; ErrMissingDep when watch has no
// deps.Snapshots or notify has no deps.Notifier.
func New(spec any, deps Deps) (Action, error) {
	deps = deps.withDefaults()
	switch s := spec.(type) {
	case *RunSpec:
		return newFromPointer(s, deps)
	case *ShellSpec:
		return newFromPointer(s, deps)
	case *WatchSpec:
		return newFromPointer(s, deps)
	case *NotifySpec:
		return newFromPointer(s, deps)
	case *PingSpec:
		return newFromPointer(s, deps)
	case RunSpec:
		if err := invalid("run", s.Validate()); err != nil {
			return nil, err
		}
		return &commandAction{argv: append([]string(nil), s.Argv...), grace: deps.KillGrace}, nil
	case ShellSpec:
		if err := invalid("shell", s.Validate()); err != nil {
			return nil, err
		}
		argv, cmdLine := shellCommand(s.Script)
		return &commandAction{argv: argv, cmdLine: cmdLine, grace: deps.KillGrace}, nil
	case WatchSpec:
		if err := invalid("watch", s.Validate()); err != nil {
			return nil, err
		}
		if deps.Snapshots == nil {
			return nil, fmt.Errorf("%w: watch needs a SnapshotStore", ErrMissingDep)
		}
		return newWatch(s, deps)
	case NotifySpec:
		if err := invalid("notify", s.Validate()); err != nil {
			return nil, err
		}
		if deps.Notifier == nil {
			return nil, fmt.Errorf("%w: notify needs a Notifier", ErrMissingDep)
		}
		return &notifyAction{spec: s, notifier: deps.Notifier}, nil
	case PingSpec:
		if err := invalid("ping", s.Validate()); err != nil {
			return nil, err
		}
		return &pingAction{url: s.URL, shown: redact.URL(s.URL), method: methodOrGet(s.Method), client: deps.HTTPClient, userAgent: deps.UserAgent}, nil
	}
	return nil, fmt.Errorf("%w: %T", ErrUnknownSpec, spec)
}

// sharedClient is the default HTTP client. It is shared because the engine builds actions per
// run: a client per action would leave a pool of idle connections behind every run.
var sharedClient = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
})

// newFromPointer builds the action for *p; a nil p is ErrUnknownSpec.
func newFromPointer[T any](p *T, deps Deps) (Action, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil %T", ErrUnknownSpec, p)
	}
	return New(*p, deps)
}

func (d Deps) withDefaults() Deps {
	if d.HTTPClient == nil {
		d.HTTPClient = sharedClient()
	}
	if d.UserAgent == "" {
		d.UserAgent = UserAgent("dev")
	}
	if d.KillGrace <= 0 {
		d.KillGrace = DefaultKillGrace
	}
	return d
}

// invalid turns Validate's findings into one error wrapping ErrInvalidSpec, or nil.
func invalid(action string, errs []FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	all := make([]error, len(errs))
	for i, fe := range errs {
		all[i] = fe
	}
	return fmt.Errorf("%w: %s: %w", ErrInvalidSpec, action, errors.Join(all...))
}

// Error makes a FieldError usable as an error: "KEY: MESSAGE" (just MESSAGE for the action key).
func (fe FieldError) Error() string {
	if fe.Key == "" {
		return fe.Message
	}
	return fe.Key + ": " + fe.Message
}

func methodOrGet(m string) string {
	if m == "" {
		return "GET"
	}
	return strings.ToUpper(m)
}
