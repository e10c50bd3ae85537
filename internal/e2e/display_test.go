//go:build unix

package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// A routine's output that would drive a terminal: OSC 52 (sets the clipboard), BEL, CSI 2J
// (clears the screen), the C1 CSI U+009B as UTF-8, and a lone CR that overwrites its line.
const hostileOutput = "before\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b2Jok\rFAKE\nafter\n"

// `history --output` shows a run's control characters as escapes, never as themselves; --raw
// prints the bytes. So does the rest of what the CLI prints: a pause note in `status` and
// `routines`.
func TestHistoryOutputEscapesControlCharacters(t *testing.T) {
	home := newHome(t, `
[[routine]]
name = "page"
every = "1h"
catch_up = "skip"
shell = 'printf "before\033]52;c;ZXZpbA==\007\033[2J\302\2332Jok\rFAKE\nafter\n"'
`)
	stdout, stderr, code := run(t, home, "run", "--here", "page", "--json")
	if code != 0 {
		t.Fatalf("run --here: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var r runOut
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Outcome != "success" {
		t.Fatalf("run --json: %v\n%s", err, stdout)
	}
	id := strconv.FormatInt(r.ID, 10)

	raw, stderr, code := run(t, home, "history", "--output", id, "--raw")
	if code != 0 || raw != hostileOutput {
		t.Fatalf("history --output --raw: exit %d, %q, want the bytes %q\n%s", code, raw, hostileOutput, stderr)
	}

	shown, stderr, code := run(t, home, "history", "--output", id)
	if code != 0 {
		t.Fatalf("history --output: exit %d\n%s", code, stderr)
	}
	assertNoControls(t, "history --output", shown)
	want := `before\u001b]52;c;ZXZpbA==\u0007\u001b[2J\u009b2Jok\u000dFAKE` + "\nafter\n"
	if shown != want {
		t.Fatalf("history --output = %q, want %q", shown, want)
	}

	if _, _, code := run(t, home, "history", "--raw"); code != 2 {
		t.Fatalf("history --raw without --output: exit %d, want 2", code)
	}

	if _, stderr, code := run(t, home, "pause", "page", "--note", "gone\x1b]52;c;ZXZpbA==\x07"); code != 0 {
		t.Fatalf("pause: exit %d\n%s", code, stderr)
	}
	for _, cmd := range []string{"status", "routines"} {
		stdout, stderr, _ := run(t, home, cmd)
		assertNoControls(t, cmd, stdout+stderr)
		if !strings.Contains(stdout, `gone\u001b]52;c;ZXZpbA==\u0007`) {
			t.Fatalf("%s does not show the pause note escaped:\n%s", cmd, stdout)
		}
	}
}

// assertNoControls fails the test if out holds a control character other than newline and tab
// (C0, DEL, C1 as UTF-8).
func assertNoControls(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			t.Fatalf("%s holds %U at byte %d: %q", what, r, i, out)
		}
	}
}
