package scheduler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/pelletier/go-toml/v2"
)

// LoadConfig reads and validates path (routines.toml). A file that cannot be read (missing, a
// directory) or does not parse returns a *ConfigError wrapping ErrConfig whose text starts with
// "FILE:LINE:COL:" ("FILE:" alone when unreadable). Otherwise it returns every valid routine in file order; invalid
// routines are left out and reported in Problems (validation never stops at the first finding).
// A file that is group/world-writable or owned by another user disables run/shell routines
// (issue 4: it would let others run commands as you).
func LoadConfig(path string) (*Config, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, &ConfigError{Problem: Problem{File: path, Message: "is a directory, not a routines file"}, Err: errIsDir}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Problem: Problem{File: path, Message: "cannot read: " + err.Error()}, Err: err}
	}
	cfg, err := parseConfig(path, data)
	if err != nil {
		return nil, err
	}
	if why := insecureFile(path); why != "" {
		cfg.refuseCommands(why)
	}
	return cfg, nil
}

// parseConfig parses and validates data as the contents of file.
func parseConfig(file string, data []byte) (*Config, error) {
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
		local: currentSystemZone(systemZones)}
	cfg := &Config{Path: file}

	keys := sortedKeys(doc)
	for _, k := range keys {
		if k != "defaults" && k != "routine" {
			v.problem("", k, "unknown key %q (want [defaults] or [[routine]])", k)
		}
	}
	defaults, ok := doc["defaults"].(map[string]any)
	if _, present := doc["defaults"]; present && !ok {
		v.problem("", "defaults", "defaults must be a table")
	}
	for _, k := range sortedKeys(defaults) {
		if k == "name" || !routineKeys[k] {
			v.problem("", "defaults."+k, "unknown key %q in [defaults]", k)
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
	cfg.Problems = v.problems
	return cfg, nil
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

// refuseCommands disables run/shell routines of a file others can write.
func (c *Config) refuseCommands(why string) {
	kept := c.Routines[:0]
	for _, r := range c.Routines {
		if r.Action == "run" || r.Action == "shell" {
			c.Problems = append(c.Problems, Problem{File: c.Path, Line: r.Line, Col: r.Col, Routine: r.Name,
				Message: fmt.Sprintf("routine %q disabled: %s; it would let others run commands as you (chmod go-w the file)", r.Name, why)})
			continue
		}
		kept = append(kept, r)
	}
	c.Routines = kept
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
