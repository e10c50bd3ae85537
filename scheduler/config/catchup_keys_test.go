package config

import (
	"strings"
	"testing"
	"time"
)

// [defaults] max_parallel_catch_up sets the engine's bound (unset: 0, the engine uses the CPU
// count); network_grace is a routine key that [defaults] fills, 2 min unless set; both are
// refused with their position when wrong, and max_parallel_catch_up is no routine key.
func TestCatchUpKeys(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, `
[defaults]
max_parallel_catch_up = 3
network_grace = "30s"

[[routine]]
name = "a"
every = "1h"
ping = { url = "http://127.0.0.1:1/" }

[[routine]]
name = "b"
every = "1h"
network_grace = "0s"
ping = { url = "http://127.0.0.1:1/" }
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxParallelCatchUp != 3 || len(cfg.Routines) != 2 || cfg.Routines[0].NetworkGrace != 30*time.Second || cfg.Routines[1].NetworkGrace != 0 {
		t.Fatalf("max_parallel_catch_up %d, routines %+v", cfg.MaxParallelCatchUp, cfg.Routines)
	}
	cfg, err = LoadConfig(writeConfig(t, "[[routine]]\nname = \"a\"\nevery = \"1h\"\nping = { url = \"http://127.0.0.1:1/\" }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxParallelCatchUp != 0 || cfg.Routines[0].NetworkGrace != DefaultNetworkGrace {
		t.Fatalf("defaults: max_parallel_catch_up %d, network_grace %v", cfg.MaxParallelCatchUp, cfg.Routines[0].NetworkGrace)
	}
	cfg, err = LoadConfig(writeConfig(t, `[defaults]
max_parallel_catch_up = 0

[[routine]]
name = "a"
every = "1h"
max_parallel_catch_up = 2
network_grace = "soon"
ping = { url = "http://127.0.0.1:1/" }
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cfg.Problems {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		":2:1: max_parallel_catch_up must be an integer from 1 to 1024",
		`:7:1: unknown key "max_parallel_catch_up"`,
		`:8:1: network_grace: "soon" is not a duration`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
}
