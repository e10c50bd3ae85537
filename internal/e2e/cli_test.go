//go:build unix || windows

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// `routinely` alone in a nogui build explains how to run the daemon.
func TestNoSubcommandInNoguiBuild(t *testing.T) {
	_, stderr, code := run(t, t.TempDir())
	if code != 1 || !strings.Contains(stderr, "without the desktop app") || !strings.Contains(stderr, "routinely daemon") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

// Bad flags and arguments exit 2; help lists the exit codes.
func TestUsageErrorsAndHelp(t *testing.T) {
	home := newHome(t, hourly)
	for _, args := range [][]string{{"status", "--bogus"}, {"preview"}, {"daemon", "--on-takeover", "maybe"}, {"history", "--limit", "0"}, {"no-such-command"}} {
		if _, stderr, code := run(t, home, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr:\n%s", args, code, stderr)
		}
	}
	stdout, _, code := run(t, home, "daemon", "--help")
	if code != 0 || !strings.Contains(stdout, "Exit codes:") || !strings.Contains(stdout, "75") || !strings.Contains(stdout, "78") {
		t.Fatalf("daemon --help: exit %d:\n%s", code, stdout)
	}
}

// preview --json returns the requested number of increasing slots; paths and version --json parse.
func TestPreviewPathsVersionJSON(t *testing.T) {
	home := newHome(t, hourly)
	stdout, stderr, code := run(t, home, "preview", "hourly-note", "--count", "3", "--from", "2026-03-29T00:30:00Z", "--json")
	var p struct {
		Routine string      `json:"routine"`
		From    time.Time   `json:"from"`
		Slots   []time.Time `json:"slots"`
	}
	if err := json.Unmarshal([]byte(stdout), &p); err != nil || code != 0 {
		t.Fatalf("preview --json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	if p.Routine != "hourly-note" || len(p.Slots) != 3 {
		t.Fatalf("preview = %+v", p)
	}
	for i, s := range p.Slots {
		if !s.After(p.From) || (i > 0 && s.Sub(p.Slots[i-1]) != time.Hour) {
			t.Fatalf("slots %v: want hourly after %v", p.Slots, p.From)
		}
	}

	stdout, _, code = run(t, home, "paths", "--json")
	var paths map[string]string
	if err := json.Unmarshal([]byte(stdout), &paths); err != nil || code != 0 || !strings.HasSuffix(paths["config"], "routines.toml") || paths["state"] == "" {
		t.Fatalf("paths --json: exit %d %v\n%s", code, err, stdout)
	}
	stdout, _, code = run(t, home, "version", "--json")
	var v map[string]string
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || code != 0 || v["version"] == "" {
		t.Fatalf("version --json: exit %d %v\n%s", code, err, stdout)
	}
}

// The --json shapes keep the keys the README documents (scripts depend on them).
func TestJSONShapesKeepDocumentedKeys(t *testing.T) {
	home := newHome(t, hourly)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	if _, stderr, code := run(t, home, "run", "hourly-note"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	keys := func(args ...string) map[string]any {
		t.Helper()
		stdout, stderr, _ := run(t, home, args...)
		var v any
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("%v: %v\n%s%s", args, err, stdout, stderr)
		}
		if list, ok := v.([]any); ok {
			if len(list) == 0 {
				t.Fatalf("%v: empty list", args)
			}
			v = list[0]
		}
		return v.(map[string]any)
	}
	want := map[string][]string{
		"status": {"health", "exit_code", "state_dir", "config", "held", "alive", "holder_pid", "heartbeat_age_ms",
			"owner", "diagnoses", "pending_takeover", "routines", "problems", "config_error", "last_good_config", "journal_error", "observed_at"},
		"routines": {"name", "schedule", "action", "timezone", "next", "overdue", "paused", "pause_note", "pause_until", "running", "disabled", "last"},
		"history": {"id", "routine", "slot", "trigger", "epoch", "outcome", "reason", "started", "finished", "late_by_ms",
			"duration_ms", "exit_code", "attempts", "output_bytes"},
		"preview":   {"routine", "from", "slots"},
		"validate":  {"file", "ok", "routines", "problems", "error"},
		"paths":     {"state", "config", "journal", "logs"},
		"version":   {"version", "go", "os", "arch"},
		"autostart": {"state", "location", "target", "points_here"},
	}
	got := map[string]map[string]any{
		"status": keys("status", "--json"), "routines": keys("routines", "--json"),
		"history": keys("history", "--json"), "preview": keys("preview", "hourly-note", "--json"),
		"validate": keys("validate", "--json"), "paths": keys("paths", "--json"),
		"version": keys("version", "--json"), "autostart": keys("autostart", "status", "--json"),
	}
	for cmd, ks := range want {
		if len(got[cmd]) != len(ks) {
			t.Errorf("%s --json has %d keys, README documents %d: %v", cmd, len(got[cmd]), len(ks), got[cmd])
		}
		for _, k := range ks {
			if _, ok := got[cmd][k]; !ok {
				t.Errorf("%s --json lacks %q", cmd, k)
			}
		}
	}
	owner, _ := got["status"]["owner"].(map[string]any)
	for _, k := range []string{"role", "pid", "host", "uid", "version", "epoch", "state", "since", "heartbeat_at", "last_tick_at", "next_due_at", "in_flight", "last_job"} {
		if _, ok := owner[k]; !ok {
			t.Errorf("status --json owner lacks %q", k)
		}
	}
}
