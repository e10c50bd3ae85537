//go:build linux

package torture

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestTorture is the chaos test against the real binary. Duration from
// ROUTINELY_TORTURE_DURATION (default 120s), seed from ROUTINELY_TORTURE_SEED (default: the
// clock), binary from ROUTINELY_BIN (default: built here with -tags nogui).
func TestTorture(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos run skipped under -short")
	}
	duration := 120 * time.Second
	if v := os.Getenv("ROUTINELY_TORTURE_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("ROUTINELY_TORTURE_DURATION: %v", err)
		}
		duration = d
	}
	seed := time.Now().UnixNano()
	if v := os.Getenv("ROUTINELY_TORTURE_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("ROUTINELY_TORTURE_SEED: %v", err)
		}
		seed = s
	}
	dir, err := os.MkdirTemp("", "routinely-torture-")
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("ROUTINELY_BIN")
	if bin == "" {
		var err error
		if bin, err = Build(dir); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (rerun with ROUTINELY_TORTURE_SEED=%d), duration %v, dir %s", seed, seed, duration, dir)
	rep, err := Run(Options{Bin: bin, Dir: dir, Duration: duration, Seed: seed, Out: os.Stdout})
	if err != nil {
		t.Fatalf("chaos run could not complete: %v (dir kept: %s)", err, dir)
	}
	if rep.Failed() {
		t.Fatalf("invariants violated; seed %d; directory kept for inspection: %s", seed, dir)
	}
	os.RemoveAll(dir)
}
