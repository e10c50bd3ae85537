package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// MaxConfigBytes is the largest routines.toml accepted: 1 MiB. Ten thousand routines take
// about 650 KB; the bound caps what a hostile or runaway file costs to read, parse and
// validate (each linear in the size).
const MaxConfigBytes = 1 << 20

// LoadConfig reads and validates path (routines.toml). A file that cannot be used as a whole
// (missing, unreadable, a directory, not a regular file, over MaxConfigBytes, nested deeper than
// MaxNesting or MaxKeyDepth, or not TOML) returns a *ConfigError wrapping ErrConfig whose text starts with
// "FILE:LINE:COL:" ("FILE:" alone when it was not read). Otherwise it returns every valid
// routine in file order; invalid routines are left out and reported in Problems (validation
// never stops at the first finding).
//
// The file is opened once, vetted, and read from that same descriptor (openConfig). When
// another user could have changed what was read (the file, or a directory on its path, is
// writable by or owned by someone other than you or root), the file grants nothing that user
// could not do themselves (refuseUntrusted): its run, shell, watch and ping routines and its
// [hub] are refused, each with a Problem saying what and how to fix it.
func LoadConfig(path string) (*Config, error) {
	data, d, err := readConfig(path)
	if err != nil {
		return nil, &ConfigError{Problem: Problem{File: path, Message: readProblem(err)}, Err: err}
	}
	snap := Snapshot{Path: path, Data: data}
	if d != nil {
		snap.DistrustWhy, snap.DistrustFix = d.why, d.fix
	}
	return FromSnapshot(snap)
}

// Config is a validated routines.toml: the valid routines and the problems of the invalid ones.
type Config struct {
	Path     string
	Routines []*Routine
	Problems []Problem
	// Hub is the [hub] table: the devices this one shares its routines with. nil: none (every
	// routine runs on this device alone), or the table is invalid (HubInvalid).
	Hub *Hub
	// HubInvalid: the file has a [hub] table that is not usable (its problems are in Problems).
	// An owner must then not run the routines alone, which could run a shared one twice. Also
	// set when a file another user could change has a [hub] (refuseUntrusted).
	HubInvalid bool
	// MaxParallelCatchUp is [defaults] max_parallel_catch_up: how many catch-up runs may run at
	// once (0: not set; the engine then uses the number of CPUs).
	MaxParallelCatchUp int
	source             Snapshot // what it was made from, for Snapshot
	hubAt              pos      // where the [hub] header is, when the file has one
}

// Snapshot is what a Config is made from: the file's contents as read and, when another user
// could have changed them, why and what fixes it (what reaches commands, the network or a
// secret is then refused: refuseUntrusted). The owner keeps the last good one in the journal, so that every process can show,
// and a new owner run, the set that stays in force while routines.toml does not parse.
type Snapshot struct {
	Path        string `json:"path"`
	Data        []byte `json:"data"`
	DistrustWhy string `json:"distrust_why,omitempty"`
	DistrustFix string `json:"distrust_fix,omitempty"`
}

// Snapshot returns what c was made from (the zero Snapshot for a Config that Parse or a test
// built without LoadConfig's vetting).
func (c *Config) Snapshot() Snapshot { return c.source }

// FromSnapshot validates s.Data as LoadConfig does once it has read the file, and refuses what
// refuseUntrusted refuses when s says another user could have changed it. Errors: those of Parse.
func FromSnapshot(s Snapshot) (*Config, error) {
	cfg, err := Parse(s.Path, s.Data)
	if err != nil {
		return nil, err
	}
	if s.DistrustWhy != "" {
		cfg.refuseUntrusted(distrust{why: s.DistrustWhy, fix: s.DistrustFix})
	}
	cfg.source = s
	return cfg, nil
}

// MaxParallelCatchUp bounds [defaults] max_parallel_catch_up.
const MaxParallelCatchUp = 1024

// distrust is why a routines file must grant nothing beyond what any other user could do, and
// what fixes that.
type distrust struct {
	why string // what another user can do, naming the file or directory
	fix string // the command or change that fixes it
}

// readConfig opens path with openConfig and reads at most MaxConfigBytes from that
// descriptor. Errors: those of openConfig and of the read, errTooLarge.
func readConfig(path string) ([]byte, *distrust, error) {
	f, d, err := openConfig(path)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxConfigBytes {
		return nil, nil, errTooLarge
	}
	return data, d, nil
}

// regular returns nil when fi (path's) is a regular file, else errIsDir or errNotRegular
// naming what it is.
func regular(path string, fi os.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return errIsDir
	}
	kind := "a special file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s is %s, %w", path, kind, errNotRegular)
}

// readProblem is the message for a routines file that could not be read.
func readProblem(err error) string {
	switch {
	case errors.Is(err, errIsDir):
		return "is a directory, not a routines file"
	case errors.Is(err, errNotRegular):
		return err.Error() + "; routines.toml must be a regular file"
	case errors.Is(err, errTooLarge):
		return fmt.Sprintf("is larger than %d KiB, the most a routines file may be", MaxConfigBytes>>10)
	}
	return "cannot read: " + err.Error()
}

// Parse validates data as the contents of the routines file named file (used only in
// messages), as LoadConfig does after reading it, without the permission vetting of a file on
// disk. Errors: a *ConfigError wrapping ErrConfig when data is not TOML or is past MaxNesting,
// MaxKeyDepth or MaxTableKeys; every other finding is a Problem of the returned Config.
func Parse(file string, data []byte) (*Config, error) {
	// The decoder's cost per byte is bounded only for files within these limits (tomllimits.go).
	if off := tooDeep(data); off >= 0 {
		return nil, limitError(file, data, off, errTooDeep,
			"arrays or inline tables nested deeper than %d levels; a routine needs 3 at most", MaxNesting)
	}
	if off := keysTooDeep(data); off >= 0 {
		return nil, limitError(file, data, off, errTooDeep,
			"keys nested deeper than %d levels (each part of a table header or dotted key is one level); a routine needs 4 at most", MaxKeyDepth)
	}
	if off, what := tooWide(data); off >= 0 {
		return nil, limitError(file, data, off, errTooWide, "%s; a routine has 25 keys at most", what)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		p := Problem{File: file, Line: 1, Col: 1, Message: err.Error()}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			p.Line, p.Col = de.Position()
		}
		return nil, &ConfigError{Problem: p, Err: err}
	}
	v := &validator{file: file, base: filepath.Base(file), positions: keyPositions(data),
		local: CurrentSystemZone(SystemZones), now: time.Now()}
	cfg := &Config{Path: file}

	keys := sortedKeys(doc)
	for _, k := range keys {
		if k != "defaults" && k != "routine" && k != "hub" {
			v.problem("", k, "unknown key %q (want [defaults], [[routine]] or [hub])", k)
		}
	}
	defaults, ok := doc["defaults"].(map[string]any)
	if _, present := doc["defaults"]; present && !ok {
		v.problem("", "defaults", "defaults must be a table")
	}
	for _, k := range sortedKeys(defaults) {
		if k == "name" || (!routineKeys[k] && !defaultsOnlyKeys[k]) {
			v.problem("", "defaults."+k, "unknown key %q in [defaults]", k)
		}
	}
	if _, present := doc["hub"]; present {
		cfg.hubAt = v.posOf("hub")
		cfg.Hub = v.hub(doc["hub"])
		cfg.HubInvalid = cfg.Hub == nil
	}
	if val, ok := defaults["max_parallel_catch_up"]; ok {
		n, isInt := val.(int64)
		if !isInt || n < 1 || n > MaxParallelCatchUp {
			v.problem("", "defaults.max_parallel_catch_up", "max_parallel_catch_up must be an integer from 1 to %d", MaxParallelCatchUp)
		} else {
			cfg.MaxParallelCatchUp = int(n)
		}
	}
	list, ok := doc["routine"].([]any)
	if _, present := doc["routine"]; present && !ok {
		v.problem("", "routine", "routine must be an array of tables ([[routine]])")
	}
	seen := map[string]bool{}
	for i, item := range list {
		tab, ok := item.(map[string]any)
		if !ok {
			v.problem("", fmt.Sprintf("routine[%d]", i), "routine must be a table")
			continue
		}
		r := v.routine(fmt.Sprintf("routine[%d]", i), tab, defaults)
		if r == nil {
			continue
		}
		if seen[r.Name] {
			v.problem(r.Name, fmt.Sprintf("routine[%d].name", i), "duplicate routine name %q", r.Name)
			continue
		}
		seen[r.Name] = true
		cfg.Routines = append(cfg.Routines, r)
	}
	cfg.Problems = v.report()
	return cfg, nil
}

// limitError is the *ConfigError for a file past one of the limits of tomllimits.go, at byte
// offset off of data.
func limitError(file string, data []byte, off int, err error, format string, args ...any) *ConfigError {
	at := newPositioner(data).pos(off)
	return &ConfigError{Problem: Problem{File: file, Line: at.Line, Col: at.Col, Message: fmt.Sprintf(format, args...)}, Err: err}
}

// ConfigError is a routines.toml that cannot be used as a whole (unreadable or not TOML). Its
// text is "FILE:LINE:COL: message" ("FILE: message" when unreadable) and it wraps ErrConfig and
// the read or parse error.
type ConfigError struct {
	Problem Problem
	Err     error // the read or parse error
}

func (e *ConfigError) Error() string { return e.Problem.String() }

// Unwrap returns ErrConfig and the underlying error.
func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

// ProblemOf is the Problem of a LoadConfig error at its position (a *ConfigError's), or one
// without a position naming path for any other error.
func ProblemOf(path string, err error) Problem {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce.Problem
	}
	return Problem{File: path, Message: err.Error()}
}

// refusedBecause says, per action, what a routine from a file another user could change would
// let them do as you; actions absent here (notify) reach neither the network nor a secret, and
// another user's file may keep them.
var refusedBecause = map[string]string{
	"run":   "so it would let others run commands as you",
	"shell": "so it would let others run commands as you",
	"watch": "so it would let others send requests from your machine and network as you",
	"ping":  "so it would let others send requests from your machine and network as you",
}

// refuseUntrusted makes a file another user could have changed (d says how) grant nothing they
// could not do themselves: its routines whose action is in refusedBecause are disabled, and its
// [hub] is refused, since it names the server this device sends its hub token to and the token
// file it reads. The hub then counts as unusable (HubInvalid): the routines are not run alone
// instead, which could run a shared one twice. Each refusal is a Problem at its line and
// column, with d's reason and fix.
func (c *Config) refuseUntrusted(d distrust) {
	kept := c.Routines[:0]
	for _, r := range c.Routines {
		if because, refused := refusedBecause[r.Action]; refused {
			c.Problems = append(c.Problems, Problem{File: c.Path, Line: r.Line, Col: r.Col, Routine: r.Name,
				Message: fmt.Sprintf("routine %q disabled: %s, %s; fix: %s", r.Name, d.why, because, d.fix)})
			continue
		}
		kept = append(kept, r)
	}
	c.Routines = kept
	if c.Hub != nil || c.HubInvalid {
		c.Problems = append(c.Problems, Problem{File: c.Path, Line: c.hubAt.Line, Col: c.hubAt.Col,
			Message: fmt.Sprintf("[hub] refused: %s, so it would let others send your hub token to a server of their choosing; fix: %s", d.why, d.fix)})
		c.Hub, c.HubInvalid = nil, true
	}
}

// Routine returns the valid routine called name, or nil.
func (c *Config) Routine(name string) *Routine {
	if c == nil {
		return nil
	}
	for _, r := range c.Routines {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
