package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A valid [hub]: its keys, the device name's default, token_file relative to routines.toml,
// and every routine shared unless it says shared = false.
func TestHubTable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "routines.toml")
	cfg, err := Parse(path, []byte(`
[hub]
url = "nats://hub.local:4222"
token_file = "hub.token"
liveness_ttl = "7s"

[[routine]]
name = "briefing"
at = ["08:30"]
notify = { title = "Briefing", body = "now" }

[[routine]]
name = "local-backup"
every = "1h"
shared = false
notify = { title = "x", body = "y" }
`))
	if err != nil || len(cfg.Problems) > 0 {
		t.Fatalf("parse: %v %v", err, cfg.Problems)
	}
	h := cfg.Hub
	if h == nil || h.URL != "nats://hub.local:4222" || h.TokenFile != filepath.Join(dir, "hub.token") ||
		h.Device != DeviceName() || h.Offline != OfflineClosed || h.LivenessTTL != 7*time.Second {
		t.Fatalf("hub: %+v", h)
	}
	if cfg.HubInvalid {
		t.Fatal("a valid [hub] reported invalid")
	}
	if bad, _ := Parse(path, []byte("[hub]\nurl = \"http://x\"\n")); bad.Hub != nil || !bad.HubInvalid {
		t.Fatalf("an invalid [hub]: Hub %+v, HubInvalid %v; want nil, true", bad.Hub, bad.HubInvalid)
	}
	if !cfg.Routines[0].Shared || cfg.Routines[1].Shared {
		t.Fatalf("shared: %v %v, want true false", cfg.Routines[0].Shared, cfg.Routines[1].Shared)
	}
	if _, err := h.ReadToken(); !errors.Is(err, ErrNoHubToken) {
		t.Fatalf("missing token file: %v, want ErrNoHubToken", err)
	}
	if err := os.WriteFile(h.TokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := h.ReadToken(); err != nil || tok != "s3cret" {
		t.Fatalf("token: %q %v", tok, err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Chmod(h.TokenFile, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := h.ReadToken(); !errors.Is(err, ErrNoHubToken) {
			t.Fatalf("token file others can read: %v, want ErrNoHubToken", err)
		}
	}
}

// The definition hash changes with what a run does or when, and not with this device's own
// bookkeeping (keep_runs, paused, shared).
func TestDefinitionHash(t *testing.T) {
	parse := func(extra string) *Routine {
		t.Helper()
		cfg, err := Parse("r.toml", []byte("[[routine]]\nname = \"a\"\nevery = \"1m\"\nnotify = { title = \"t\", body = \"b\" }\n"+extra))
		if err != nil || len(cfg.Routines) != 1 {
			t.Fatalf("parse: %v %+v", err, cfg)
		}
		return cfg.Routines[0]
	}
	base := DefinitionHash(parse(""))
	if DefinitionHash(parse("keep_runs = 10\npaused = true\nshared = true\n")) != base {
		t.Error("keep_runs, paused or shared changed the definition hash")
	}
	if DefinitionHash(parse("timeout = \"1m\"\n")) == base || DefinitionHash(parse("jitter = \"5s\"\n")) == base {
		t.Error("a timeout or jitter did not change the definition hash")
	}
}

// A device name is 1 to 64 of A-Z a-z 0-9 _ -: anything else is a problem naming the rule.
func TestHubDeviceNames(t *testing.T) {
	long := strings.Repeat("a", 64)
	for name, ok := range map[string]bool{
		"laptop": true, "Desk_top-2": true, long: true,
		"": false, long + "a": false, "lap top": false, "lap.top": false, "läptop": false, "a*": false,
	} {
		cfg, err := Parse("routines.toml", []byte(fmt.Sprintf("[hub]\nurl = \"nats://127.0.0.1:4222\"\ntoken = \"t\"\ndevice = %q\n", name)))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Hub != nil && len(cfg.Problems) == 0; got != ok {
			t.Errorf("device %q: accepted %v, want %v (problems %v)", name, got, ok, cfg.Problems)
		}
		if !ok && (len(cfg.Problems) == 0 || !strings.Contains(cfg.Problems[0].String(), "must be 1 to 64 of A-Z a-z 0-9 _ -")) {
			t.Errorf("device %q: problems %v, want the rule named", name, cfg.Problems)
		}
	}
}

// token_file must be inside the directory of routines.toml: any other path (absolute, "~",
// climbing out with "..") is a problem at its line:col saying where to put it, and the [hub]
// is unusable; a path inside, at any depth, is accepted.
func TestHubTokenFileOnlyBesideRoutines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "routines.toml")
	home, _ := os.UserHomeDir()
	for file, inside := range map[string]bool{
		"hub.token": true, "keys/hub.token": true, "./keys/../hub.token": true,
		"../hub.token": false, "~/.git-credentials": false, filepath.Join(home, ".git-credentials"): false,
		".": false, "keys/../../x": false,
	} {
		cfg, err := Parse(path, []byte(fmt.Sprintf("[hub]\nurl = \"nats://127.0.0.1:4222\"\ntoken_file = %q\n", file)))
		if err != nil {
			t.Fatal(err)
		}
		if inside {
			if cfg.Hub == nil || len(cfg.Problems) > 0 {
				t.Errorf("token_file %q refused: %v", file, cfg.Problems)
			}
			continue
		}
		if cfg.Hub != nil || !cfg.HubInvalid || len(cfg.Problems) != 1 ||
			!strings.HasPrefix(cfg.Problems[0].String(), path+":3:1: token_file ") ||
			!strings.Contains(cfg.Problems[0].Message, " is outside "+dir+", the directory of routines.toml, the only place a secret file is read from; fix: copy it there") ||
			!strings.HasSuffix(cfg.Problems[0].Message, `and set token_file = "hub.token"`) {
			t.Errorf("token_file %q: hub %+v, problems %v; want one at 3:1 saying where to put it", file, cfg.Hub, cfg.Problems)
		}
	}
}

// credentials_file alone makes a usable [hub] (the device connects with its key), and follows
// token_file's rule for where a secret lies.
func TestHubCredentialsFileAloneAndOnlyBesideRoutines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "routines.toml")
	for file, inside := range map[string]bool{"laptop.creds": true, "../laptop.creds": false, "~/laptop.creds": false} {
		cfg, err := Parse(path, []byte(fmt.Sprintf("[hub]\nurl = \"nats://127.0.0.1:4222\"\ncredentials_file = %q\n", file)))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case inside && (cfg.Hub == nil || len(cfg.Problems) != 0 || cfg.Hub.CredentialsFile != filepath.Join(dir, file)):
			t.Errorf("credentials_file %q: hub %+v, problems %v; want it accepted", file, cfg.Hub, cfg.Problems)
		case !inside && (cfg.Hub != nil || len(cfg.Problems) != 1 || !strings.Contains(cfg.Problems[0].Message, "is outside")):
			t.Errorf("credentials_file %q: hub %+v, problems %v; want one saying it is outside", file, cfg.Hub, cfg.Problems)
		}
	}
}
