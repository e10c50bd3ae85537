//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func manualConfig(file string) string {
	return fmt.Sprintf(`
[[routine]]
name = "report"
every = "1h"
catch_up = "skip"
shell = 'echo "$ROUTINELY_TRIGGER $PPID" >> %q'
`, file)
}

// `run NAME` goes through the owner: exactly one run, in the owner, with trigger manual.
func TestRunNowGoesThroughTheOwner(t *testing.T) {
	file := filepath.Join(t.TempDir(), "runs.txt")
	home := newHome(t, manualConfig(file))
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())

	stdout, stderr, code := run(t, home, "run", "report", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var r runOut
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("run --json: %v\n%s", err, stdout)
	}
	if r.Outcome != "success" || r.Trigger != "manual" || r.Routine != "report" || r.ID == 0 {
		t.Fatalf("run --json = %+v", r)
	}
	lines := readLines(t, file)
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "manual ") {
		t.Fatalf("runs file = %q, want one manual run", lines)
	}

	// history --json shows it.
	stdout, _, code = run(t, home, "history", "report", "--json")
	var hist []runOut
	if err := json.Unmarshal([]byte(stdout), &hist); err != nil || code != 0 {
		t.Fatalf("history --json: exit %d, %v\n%s", code, err, stdout)
	}
	if len(hist) == 0 || hist[0].ID != r.ID {
		t.Fatalf("history = %+v, want run %d first", hist, r.ID)
	}
}

// With no owner, `run` exits 75; `run --here` owns, runs and releases.
func TestRunWithoutOwner(t *testing.T) {
	file := filepath.Join(t.TempDir(), "runs.txt")
	home := newHome(t, manualConfig(file))

	_, stderr, code := run(t, home, "run", "report")
	if code != 75 || !strings.Contains(stderr, "--here") {
		t.Fatalf("run with no owner: exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a run happened without an owner")
	}

	stdout, stderr, code := run(t, home, "run", "--here", "report")
	if code != 0 {
		t.Fatalf("run --here: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if lines := readLines(t, file); len(lines) != 1 || !strings.HasPrefix(lines[0], "manual ") {
		t.Fatalf("runs file = %q, want one manual run", lines)
	}
	if s := status(t, home); s.Held {
		t.Fatalf("run --here kept ownership: %+v", s)
	}
}

// pause and resume are recorded in the journal and shown by routines --json.
func TestPauseResume(t *testing.T) {
	home := newHome(t, hourly)
	if _, stderr, code := run(t, home, "pause", "hourly-note", "--note", "on holiday", "--until", "2h"); code != 0 {
		t.Fatalf("pause: exit %d: %s", code, stderr)
	}
	r := routines(t, home)
	if !r[0].Paused || r[0].PauseNote != "on holiday" {
		t.Fatalf("after pause: %+v", r[0])
	}
	if _, stderr, code := run(t, home, "resume", "--all"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if r := routines(t, home); r[0].Paused {
		t.Fatalf("after resume: %+v", r[0])
	}
	if _, _, code := run(t, home, "pause"); code != 2 {
		t.Fatalf("pause with neither NAME nor --all: exit %d, want 2", code)
	}
	if _, _, code := run(t, home, "pause", "no-such-routine"); code != 1 {
		t.Fatalf("pause of an unknown routine: exit %d, want 1", code)
	}
}

func routines(t *testing.T, home string) []routineOut {
	t.Helper()
	stdout, stderr, code := run(t, home, "routines", "--json")
	var r []routineOut
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != 0 || len(r) == 0 {
		t.Fatalf("routines --json: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	return r
}

func readLines(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// A run that printed nothing says so, both in `run`'s summary and in `history --output`, whose
// stdout stays exactly the (empty) output; a run that printed something points at its output.
func TestRunWithNoOutputSaysSo(t *testing.T) {
	home := newHome(t, `
[[routine]]
name = "quiet"
every = "1h"
shell = 'true'

[[routine]]
name = "talky"
every = "1h"
shell = 'echo hello'
`)
	stdout, stderr, code := run(t, home, "run", "quiet", "--here")
	if code != 0 || !strings.Contains(stdout, "No output.") || strings.Contains(stdout, "--output") {
		t.Fatalf("run quiet: exit %d, stdout %q, stderr %q; want the summary to say No output.", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, home, "history", "--output", "1")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "run 1 printed nothing") {
		t.Fatalf("history --output 1: exit %d, stdout %q, stderr %q; want empty stdout and 'printed nothing'", code, stdout, stderr)
	}
	stdout, _, code = run(t, home, "run", "talky", "--here")
	if code != 0 || !strings.Contains(stdout, "Output: ") || !strings.Contains(stdout, "history --output 2") {
		t.Fatalf("run talky: exit %d, stdout %q; want a pointer to its output", code, stdout)
	}
	stdout, _, code = run(t, home, "history", "--output", "2")
	if code != 0 || stdout != "hello\n" {
		t.Fatalf("history --output 2: exit %d, stdout %q, want hello", code, stdout)
	}
}
