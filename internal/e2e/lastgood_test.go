package e2e

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// While routines.toml does not parse, the daemon keeps running the last good set, and `routines`
// and `status` (human and --json) show that set with the file's error: `routines` exits 78 (the
// file needs fixing), `status` keeps its owner codes. Once the owner has stopped, they still show
// it, saying that an owner runs it once it starts.
func TestBrokenConfigShowsTheLastGoodSet(t *testing.T) {
	good := "[[routine]]\nname = \"tick\"\nevery = \"1s\"\nrun = [\"true\"]\n\n[[routine]]\nname = \"weekly\"\nat = [\"08:30\"]\ndays = [\"mon\", \"tue\", \"wed\", \"thu\", \"fri\"]\nrun = [\"true\"]\n"
	home := newHome(t, good)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	// Owning comes before the routines are read: broken before that, the file is refused at
	// start (no good version yet), as `daemon` does by design.
	d.waitStderr("Owning the routines (epoch 1)", ownDeadline)
	writeConfig(t, home, good+"[[routine\n")
	d.waitStderr("the last good set keeps running", ownDeadline)

	stdout, stderr, code := run(t, home, "routines")
	if code != 78 {
		t.Errorf("routines with a broken file: exit %d, want 78", code)
	}
	for _, want := range []string{"routines.toml has an error at 11:10", "last good version", "which the owner runs", "tick", "at 08:30 Mon–Fri"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("routines stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "routines.toml:11:10:") {
		t.Errorf("routines stderr lacks the error with its position:\n%s", stderr)
	}
	stdout, _, code = run(t, home, "routines", "--json")
	var rows []routineOut
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || code != 78 || len(rows) != 2 {
		t.Errorf("routines --json: exit %d, %d rows (%v); want 78 and the 2 last good routines\n%s", code, len(rows), err, stdout)
	}

	var s struct {
		statusOut
		ConfigError string `json:"config_error"`
		LastGood    *struct {
			AppliedAt time.Time `json:"applied_at"`
			Epoch     uint64    `json:"epoch"`
		} `json:"last_good_config"`
	}
	stdout, _, code = run(t, home, "status", "--json")
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || code != 0 {
		t.Fatalf("status --json: exit %d, %v\n%s", code, err, stdout)
	}
	if !strings.Contains(s.ConfigError, "routines.toml:11:10:") || s.LastGood == nil || s.LastGood.Epoch != 1 || len(s.Routines) != 2 {
		t.Errorf("status --json: config_error %q, last_good_config %+v, %d routines; want the error, the record of epoch 1 and 2 routines",
			s.ConfigError, s.LastGood, len(s.Routines))
	}
	stdout, _, _ = run(t, home, "status")
	if !strings.Contains(stdout, "routines.toml:11:10:") || !strings.Contains(stdout, "which the owner runs") || !strings.Contains(stdout, "weekly") {
		t.Errorf("status lacks the error, the last good note or the routines:\n%s", stdout)
	}

	d.stopWith(syscall.SIGTERM)
	stdout, _, code = run(t, home, "routines")
	if code != 78 || !strings.Contains(stdout, "which an owner runs once it starts") || !strings.Contains(stdout, "weekly") {
		t.Errorf("routines with no owner: exit %d\n%s", code, stdout)
	}
}
