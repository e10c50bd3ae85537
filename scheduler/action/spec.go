package action

// The specs decoded from routines.toml by the scheduler's config parser, and the interface the
// engine calls.

import (
	"context"
	"time"
)

// RunSpec is `run = ["argv0", "arg"...]`: exec without a shell.
type RunSpec struct{ Argv []string }

// ShellSpec is `shell = "..."`: run through /bin/sh -c (cmd /C on Windows), explicitly.
type ShellSpec struct{ Script string }

// WatchSpec is `watch = { url, selector, ignore, method, headers }`.
type WatchSpec struct {
	URL      string
	Selector string
	// SelectorSet is true when the `selector` key is present in the file, so that
	// `selector = ""` is reported as an error while a missing key means "the whole page"
	// (<body>). The config parser sets it (e.g. from toml.MetaData.IsDefined).
	SelectorSet bool
	Ignore      []string
	Method      string
	Headers     map[string]string
}

// NotifySpec is `notify = { title, body }`.
type NotifySpec struct{ Title, Body string }

// PingSpec is `ping = { url, method }`.
type PingSpec struct{ URL, Method string }

// FieldError is a validation finding on one key of an action table (Key is the TOML key under
// the action, e.g. "url" or "headers.X-Token"; empty for the action key itself). The config
// parser turns it into routines.toml:LINE:COL.
type FieldError struct {
	Key     string
	Message string
}

// Notifier shows a desktop notification (desktop app: Fyne; daemon: log).
type Notifier interface {
	Notify(title, body string) error
}

// SnapshotStore keeps page-watch snapshots per routine (the journal implements it).
type SnapshotStore interface {
	LastSnapshot(routine string) (text string, ok bool, err error)
	SaveSnapshot(routine string, text string, keep int) error
}

// Input is what one run of an action receives.
type Input struct {
	Routine string
	Slot    time.Time
	RunID   int64
	Epoch   uint64
	Trigger string
	Dir     string   // working directory (run/shell)
	Env     []string // extra KEY=value, including the ROUTINELY_* variables
	Timeout time.Duration
	// OnStart, when set, is called by run and shell actions right after each attempt's process
	// has started, with its pid (on Unix also its process group id: the process leads a new
	// group). The scheduler records it so that, should the owner die mid-run, the next owner can
	// end the run's processes. It runs before the process is waited for: it must not block long.
	OnStart func(pid int)
}

// Result is the outcome of one run. Outcome is one of the scheduler's Outcome* strings.
type Result struct {
	Outcome  string
	ExitCode *int
	Output   []byte // combined output, capped by the caller at 64 KiB
	Summary  string // one line for notifications and history
	Changed  bool   // watch: the page changed
	Attempts int    // 1 + retries used
	// NoConnection marks a watch or ping that never reached the server: the connection was
	// refused or timed out, there was no route, or the name did not resolve (WithNetworkGrace).
	NoConnection bool
}

// Action is one routine's work. Run must honour ctx (timeout, replace, shutdown).
type Action interface {
	Run(ctx context.Context, in Input) Result
}
