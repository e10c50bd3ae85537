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

// settleWindow is the spread of the kill instant after a standby is ready (see settle).
const settleWindow = 20 * time.Millisecond

// monoNow reads CLOCK_MONOTONIC in ns, comparable with the daemons' logged mono_ns.
func monoNow() int64 { return torture.MonoNow() }

// phase is seeded so runs are comparable; the seed does not need printing (it only spreads
// kill instants uniformly over settleWindow).
var phase = rand.New(rand.NewSource(1))

// settle waits 100 ms plus a random part of settleWindow, so the waiter is blocked in the kernel
// well before the SIGKILL and the kill instants do not line up with anything periodic.
func settle() {
	time.Sleep(100*time.Millisecond + time.Duration(phase.Int63n(int64(settleWindow))))
}

// runHelper runs the helper mode "block:PATH" (a bare blocking flock waiter) and reports whether
// it did.
func runHelper() bool {
	mode, path, ok := strings.Cut(os.Getenv(helperEnv), ":")
	if !ok || mode != "block" {
		return false
	}
	fl := flock.New(path)
	fmt.Println("blocking")
	if err := fl.Lock(); err != nil { // flock(2) LOCK_EX without LOCK_NB
		fmt.Println("failed", err)
		os.Exit(1)
	}
	fmt.Println(monoNow())
	os.Exit(0)
	return true
}

// baselineTrial is one trial of Recovery's measurement with nothing but a bare blocking flock(2)
// waiter in the standby's place: a real daemon owns h, a helper process blocks on its
// owner.lock, the daemon is SIGKILLed, and the helper reports when it locks. The killed process
// is the same kind as in Recovery, so the figure holds all the kernel's part (ending the daemon,
// closing its files, waking the waiter) and none of Routinely's. It returns the SIGKILL → locked
// time in ms, or the failure.
func baselineTrial(h *Home) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	owner, err := h.StartOwner()
	if err != nil {
		return 0, err
	}
	waiter, out, err := helper(self, "block:"+filepath.Join(h.State, "owner.lock"), "blocking")
	if err != nil {
		owner.Kill()
		return 0, err
	}
	settle()
	t0 := monoNow()
	owner.Kill()
	line, err := out.ReadString('\n')
	_ = waiter.Wait()
	owner.WaitExit(time.Second)
	at, perr := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil || perr != nil {
		return 0, fmt.Errorf("waiter said %q: %v %v", line, err, perr)
	}
	return float64(at-t0) / 1e6, nil
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
