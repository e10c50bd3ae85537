//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/routinely/routinely/internal/torture"
)

// Home is one temporary profile with its routines and the daemons started on it.
type Home struct {
	Bin, Dir, State string
	next            int
	procs           []*torture.Proc
}

// NewHome creates dir/name with routines.toml holding routines.
func NewHome(bin, root, name, routines string) (*Home, error) {
	dir := filepath.Join(root, name)
	state := filepath.Join(dir, "home")
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(state, "routines.toml"), []byte(routines), 0o600); err != nil {
		return nil, err
	}
	return &Home{Bin: bin, Dir: dir, State: state}, nil
}

// Daemon starts `routinely --home STATE daemon ARGS...`, logging to its own file.
func (h *Home) Daemon(args ...string) (*torture.Proc, error) {
	h.next++
	p, err := torture.StartProc(h.Bin, h.Dir, h.next, append([]string{"--home", h.State, "daemon"}, args...))
	if err == nil {
		h.procs = append(h.procs, p)
	}
	return p, err
}

// StartOwner starts a daemon with args (see Daemon) and waits up to 10 s until it owns the
// home. The error is the start's, or WaitOwner's (the daemon exited, or never owned).
func (h *Home) StartOwner(args ...string) (*torture.Proc, error) {
	p, err := h.Daemon(args...)
	if err != nil {
		return nil, err
	}
	if _, _, err := h.WaitOwner(p, 10*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}

// StopDaemon sends p SIGTERM and waits up to timeout for it to drain and exit; the error says
// it did not (it is then left for Close to SIGKILL).
func StopDaemon(p *torture.Proc, timeout time.Duration) error {
	p.Term()
	if !p.WaitExit(timeout) {
		return fmt.Errorf("daemon pid %d did not exit after SIGTERM", p.PID())
	}
	return nil
}

// TimeCommand runs `routinely --home STATE ARGS...` once and returns its wall-clock time from
// launch to exit, in ms. A failed command's error quotes ARGS, the exit error and its output.
func (h *Home) TimeCommand(args ...string) (ms float64, err error) {
	start := time.Now()
	out, err := exec.Command(h.Bin, append([]string{"--home", h.State}, args...)...).CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return float64(d) / 1e6, nil
}

// Close ends every daemon still running (SIGKILL: nothing is measured any more).
func (h *Home) Close() {
	for _, p := range h.procs {
		if p.Alive() {
			p.Kill()
			p.WaitExit(5 * time.Second)
		}
	}
}

// WaitOwner waits until p owns and returns when it did, in CLOCK_MONOTONIC ns. It prefers the
// daemon's own "ownership acquired … mono_ns=" log line (exact); without it, it watches
// owner.json for p's pid, which adds the record write and this poll (≤ 1 ms) to the figure.
func (h *Home) WaitOwner(p *torture.Proc, timeout time.Duration) (mono int64, fromLog bool, err error) {
	deadline := time.Now().Add(timeout)
	var seen int64 // when owner.json first named p
	for time.Now().Before(deadline) {
		if evs, _ := torture.ParseEvents(p.LogPath); len(evs) > 0 && evs[len(evs)-1].Acquired {
			return evs[len(evs)-1].Mono, true, nil
		}
		if seen == 0 && recordNames(h.State, p.PID()) {
			seen = torture.MonoNow()
		}
		// The record may be written just before the log line: give the exact figure a moment.
		if seen != 0 && torture.MonoNow()-seen > int64(200*time.Millisecond) {
			return seen, false, nil
		}
		if !p.Alive() {
			return 0, false, fmt.Errorf("daemon pid %d exited before owning: %s", p.PID(), tail(p.LogPath))
		}
		time.Sleep(time.Millisecond)
	}
	return 0, false, fmt.Errorf("daemon pid %d did not own within %v: %s", p.PID(), timeout, tail(p.LogPath))
}

// recordNames reports whether owner.json in state names pid as the owning process.
func recordNames(state string, pid int) bool {
	var rec struct {
		PID   int    `json:"pid"`
		State string `json:"state"`
	}
	b, err := os.ReadFile(filepath.Join(state, "owner.json"))
	return err == nil && json.Unmarshal(b, &rec) == nil && rec.PID == pid && rec.State == "owning"
}

// WaitLog waits until p's log contains s.
func WaitLog(p *torture.Proc, s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(p.LogPath); strings.Contains(string(b), s) {
			return nil
		}
		if !p.Alive() {
			return fmt.Errorf("daemon pid %d exited: %s", p.PID(), tail(p.LogPath))
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("daemon pid %d: no %q within %v: %s", p.PID(), s, timeout, tail(p.LogPath))
}

// tail returns the last 4 lines of the log at path joined by " / ", for error messages ("" when
// it cannot be read).
func tail(path string) string {
	b, _ := os.ReadFile(path)
	return lastLines(b, 4)
}

// routinesEvery returns a routines.toml of n routines named routineName(prefix, i), each due
// every period (a TOML duration such as "1s") and running /bin/true.
func routinesEvery(prefix, period string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[[routine]]\nname = %q\nevery = %q\nrun = [\"/bin/true\"]\n\n", routineName(prefix, i), period)
	}
	return b.String()
}

// routineName is the name routinesEvery gives the i-th routine: "PREFIX-007".
func routineName(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }

// idlePrefix names the routines of hourly.
const idlePrefix = "idle"

// hourly returns a routines.toml of n routines idle-000… due once an hour (nothing fires while
// measuring).
func hourly(n int) string { return routinesEvery(idlePrefix, "1h", n) }
