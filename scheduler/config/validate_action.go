package config

import (
	"strings"

	"github.com/routinely/routinely/scheduler/action"
)

// actionOf validates exactly one action key and decodes it into its action spec.
func (v *validator) actionOf(r *Routine, f fields, name string) {
	bad := func(k, format string, args ...any) { v.problem(name, f.paths[k], format, args...) }
	k, ok := v.exactlyOne(r, f, name, actionKeys, "routine needs exactly one action: run, shell, watch, notify or ping",
		"routine has two actions (%s); keep exactly one")
	if !ok {
		return
	}
	r.Action = k
	val := f.vals[k]
	tableOf := func(allowed ...string) map[string]any {
		m, ok := val.(map[string]any)
		if !ok {
			bad(k, "%s must be a table like %s = { %s = ... }", k, k, allowed[0])
			return nil
		}
		for _, key := range sortedKeys(m) {
			if !contains(allowed, key) {
				v.problem(name, f.paths[k]+"."+key, "unknown key %q in %s (want %s)", key, k, strings.Join(allowed, ", "))
			}
		}
		return m
	}
	sget := func(m map[string]any, key string) string {
		s, ok := m[key].(string)
		if _, present := m[key]; present && !ok {
			v.problem(name, f.paths[k]+"."+key, "%s.%s must be a string", k, key)
		}
		return s
	}
	var spec any
	switch k {
	case "run":
		list, _ := val.([]any)
		argv := make([]string, 0, len(list))
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				bad(k, "run must be a list of strings (argv)")
				return
			}
			argv = append(argv, s)
		}
		if len(argv) == 0 || argv[0] == "" {
			bad(k, "run must be a non-empty argv list like [\"/usr/bin/true\"]")
			return
		}
		spec = action.RunSpec{Argv: argv}
	case "shell":
		s, ok := val.(string)
		if !ok || strings.TrimSpace(s) == "" {
			bad(k, "shell must be a non-empty string")
			return
		}
		spec = action.ShellSpec{Script: s}
	case "watch":
		m := tableOf("url", "selector", "ignore", "method", "headers")
		if m == nil {
			return
		}
		w := action.WatchSpec{URL: sget(m, "url"), Selector: sget(m, "selector"), Method: sget(m, "method")}
		_, w.SelectorSet = m["selector"] // selector = "" is an error; no selector watches <body>
		if ig, ok := m["ignore"].([]any); ok {
			for _, x := range ig {
				s, _ := x.(string)
				w.Ignore = append(w.Ignore, s)
			}
		}
		if h, ok := m["headers"].(map[string]any); ok {
			w.Headers = map[string]string{}
			for hk, hv := range h {
				s, _ := hv.(string)
				w.Headers[hk] = s
			}
		}
		spec = w
	case "notify":
		m := tableOf("title", "body")
		if m == nil {
			return
		}
		spec = action.NotifySpec{Title: sget(m, "title"), Body: sget(m, "body")}
	case "ping":
		m := tableOf("url", "method")
		if m == nil {
			return
		}
		spec = action.PingSpec{URL: sget(m, "url"), Method: sget(m, "method")}
	}
	if val, ok := spec.(interface{ Validate() []action.FieldError }); ok {
		for _, fe := range val.Validate() {
			path := f.paths[k]
			if fe.Key != "" {
				path += "." + fe.Key
			}
			v.problem(name, path, "%s: %s", k, fe.Message)
		}
	}
	r.Spec = spec
}
