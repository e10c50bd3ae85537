//go:build linux

package main

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/routinely/routinely/internal/torture"
)

// helperEnv switches this program into a baseline helper process (it re-executes itself so the
// baseline, like the daemons, crosses a real process boundary).
const helperEnv = "ROUTINELY_BENCH_HELPER"

// pollInterval is the standby's guard poll period in the ownership protocol (docs/design.md#35-standby-wait).
const pollInterval = 50 * time.Millisecond

// monoNow reads CLOCK_MONOTONIC in ns, comparable with the daemons' logged mono_ns.
func monoNow() int64 { return torture.MonoNow() }

// phase is seeded so runs are comparable; the seed does not need printing (it only spreads
// kill instants uniformly over the standby's poll period).
var phase = rand.New(rand.NewSource(1))

// settle waits 100 ms plus a random part of one poll period, so the SIGKILL lands at a uniformly
// random point of the standby's poll loop instead of always just after a poll.
func settle() {
	time.Sleep(100*time.Millisecond + time.Duration(phase.Int63n(int64(pollInterval))))
}

// runHelper runs a helper mode ("hold:PATH" or "poll:PATH") and reports whether it did.
func runHelper() bool {
	mode, path, ok := strings.Cut(os.Getenv(helperEnv), ":")
	if !ok {
		return false
	}
	fl := flock.New(path)
	switch mode {
	case "hold":
		if locked, err := fl.TryLock(); err != nil || !locked {
			fmt.Println("failed", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		select {}
	case "poll":
		fmt.Println("polling")
		for {
			if locked, err := fl.TryLock(); err == nil && locked {
				fmt.Println(monoNow())
				os.Exit(0)
			}
			time.Sleep(pollInterval)
		}
	}
	return false
}

// flockBaseline is the same measurement with nothing but a gofrs/flock TryLock poll loop at the
// protocol's 50 ms period: a holder process is SIGKILLed, a poller process reports when it locks.
// It returns the SIGKILL → locked times of trials trials in ms, or the first helper's failure.
func flockBaseline(root string, trials int) (Stat, error) {
	self, err := os.Executable()
	if err != nil {
		return Stat{}, err
	}
	lock := filepath.Join(root, "baseline.lock")
	var ms []float64
	for i := 0; i < trials; i++ {
		holder, _, err := helper(self, "hold:"+lock, "locked")
		if err != nil {
			return Stat{}, err
		}
		poller, out, err := helper(self, "poll:"+lock, "polling")
		if err != nil {
			_ = holder.Process.Kill()
			return Stat{}, err
		}
		settle()
		t0 := monoNow()
		_ = holder.Process.Kill()
		_ = holder.Wait()
		line, err := out.ReadString('\n')
		_ = poller.Wait()
		at, perr := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil || perr != nil {
			return Stat{}, fmt.Errorf("poller said %q: %v %v", line, err, perr)
		}
		ms = append(ms, float64(at-t0)/1e6)
	}
	return Summarize(ms), nil
}

// helper starts self (this program) in a helper mode and waits for its first line to be ready.
// It returns the running command and the reader of its further output; on a wrong first line
// the helper is killed and the error quotes what it said.
func helper(self, mode, ready string) (*exec.Cmd, *bufio.Reader, error) {
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != ready {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, fmt.Errorf("helper %s said %q: %v", mode, line, err)
	}
	return cmd, r, nil
}
