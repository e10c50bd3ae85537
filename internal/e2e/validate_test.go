//go:build unix || windows

package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The shipped examples validate.
func TestValidateExamples(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	examples := filepath.Join(filepath.Dir(file), "..", "..", "examples", "routines.toml")
	stdout, stderr, code := run(t, t.TempDir(), "validate", "--json", examples)
	if code != 0 {
		t.Fatalf("validate examples: exit %d\n%s%s", code, stdout, stderr)
	}
	var v struct {
		OK       bool     `json:"ok"`
		Routines []string `json:"routines"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || !v.OK || len(v.Routines) < 4 {
		t.Fatalf("validate --json = %s (%v), want ok with the 4 example routines", stdout, err)
	}
}

// A file that does not parse, and a routine that is invalid, exit 78 naming file:line:col.
func TestValidateBrokenFileNamesLineAndColumn(t *testing.T) {
	cases := map[string]struct {
		config string
		want   string // regexp on stderr
	}{
		"syntax": {
			config: "[[routine]]\nname = \"a\"\nevery = \"1m\nnotify = { title = \"x\" }\n",
			want:   `routines\.toml:3:\d+:`,
		},
		"invalid routine": {
			config: "[[routine]]\nname = \"ok\"\nevery = \"1m\"\nnotify = { title = \"x\" }\n\n[[routine]]\nname = \"bad\"\nevery = \"soon\"\nnotify = { title = \"x\" }\n",
			want:   `routines\.toml:8:\d+: .*bad.*every`,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			home := newHome(t, c.config)
			_, stderr, code := run(t, home, "validate")
			if code != 78 {
				t.Fatalf("exit %d, want 78; stderr:\n%s", code, stderr)
			}
			if !regexp.MustCompile(c.want).MatchString(stderr) {
				t.Fatalf("stderr does not match %s:\n%s", c.want, stderr)
			}
			// The daemon refuses a file that does not parse with the same code and position.
			if name == "syntax" {
				_, stderr, code := run(t, home, "daemon")
				if code != 78 || !regexp.MustCompile(c.want).MatchString(stderr) {
					t.Fatalf("daemon on a broken file: exit %d, stderr:\n%s", code, stderr)
				}
			}
		})
	}
}

// A problem in [defaults] disables every routine that inherits it, and validate says so once:
// one line naming the routines, and the summary counts it once.
func TestValidatePrintsEachProblemOnce(t *testing.T) {
	home := newHome(t, "[defaults]\ntimezone = \"Mars/Base\"\n\n[[routine]]\nname = \"x\"\nevery = \"5s\"\nshell = 'true'\n\n[[routine]]\nname = \"y\"\nevery = \"5s\"\nshell = 'true'\n")
	_, stderr, code := run(t, home, "validate")
	if code != 78 {
		t.Fatalf("validate: exit %d, want 78\n%s", code, stderr)
	}
	if n := strings.Count(stderr, `unknown time zone "Mars/Base"`); n != 1 {
		t.Fatalf("the [defaults] problem is printed %d times, want once:\n%s", n, stderr)
	}
	if !strings.Contains(stderr, "routines.toml:2:1: unknown time zone \"Mars/Base\" (routines x, y)") || !strings.Contains(stderr, ": 1 problem;") {
		t.Fatalf("want one line naming both routines and a summary of 1 problem:\n%s", stderr)
	}
}
