//go:build linux

package torture

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Proc is one contender: a real `routinely daemon` process with its own log file, and the
// harness's record of what was done to it, in CLOCK_MONOTONIC nanoseconds.
type Proc struct {
	ID      int
	Args    []string
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}

	mu         sync.Mutex
	StartMono  int64
	EndMono    int64 // when the harness saw it exit (0 while alive)
	KilledMono int64 // when the harness sent SIGKILL (0 if never)
	Termed     bool  // the harness sent SIGTERM
	Stopped    bool  // currently SIGSTOPped by the harness
	ExitCode   int   // -1 when ended by a signal
	Signal     string
}

// StartProc launches bin with args in its own process group, logging stdout and stderr to
// dir/proc-ID.log (ID two digits), and records StartMono. The error is the log file's creation
// or the start's; the exit is recorded in the background (EndMono, ExitCode, Signal, Done).
func StartProc(bin, dir string, id int, args []string) (*Proc, error) {
	p := &Proc{ID: id, Args: args, LogPath: filepath.Join(dir, fmt.Sprintf("proc-%02d.log", id)), done: make(chan struct{})}
	f, err := os.Create(p.LogPath)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "# harness: %s %v\n", bin, args)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	// Its own process group, so a Ctrl-C of `go test` does not reach it before the harness does.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.StartMono = MonoNow()
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	go func() {
		_ = p.cmd.Wait() // the outcome is read from ProcessState below
		end := MonoNow()
		f.Close()
		p.mu.Lock()
		p.EndMono = end
		p.ExitCode = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.Signal = ws.Signal().String()
		}
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// PID returns the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Alive reports whether the process has not yet exited.
func (p *Proc) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// signal updates the harness's record with note, under the lock, and only then sends sig, so
// the record never lags what the process was sent. A send error (already exited) is ignored.
func (p *Proc) signal(sig syscall.Signal, note func()) {
	p.mu.Lock()
	note()
	p.mu.Unlock()
	_ = p.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL, recording the instant just before sending: the process owned at least
// until then, and not much longer.
func (p *Proc) Kill() {
	p.signal(syscall.SIGKILL, func() {
		if p.KilledMono == 0 {
			p.KilledMono = MonoNow()
		}
		p.Stopped = false
	})
}

// Term sends SIGTERM (a stopped process handles it after SIGCONT).
func (p *Proc) Term() { p.signal(syscall.SIGTERM, func() { p.Termed = true }) }

// Hup sends SIGHUP (a closed terminal), which must drain exactly like SIGTERM; it counts as the
// one stop signal a process gets, since a later SIGTERM would mean "exit now".
func (p *Proc) Hup() { p.signal(syscall.SIGHUP, func() { p.Termed = true }) }

// Stop sends SIGSTOP; Cont resumes it.
func (p *Proc) Stop() { p.signal(syscall.SIGSTOP, func() { p.Stopped = true }) }

// Cont sends SIGCONT.
func (p *Proc) Cont() { p.signal(syscall.SIGCONT, func() { p.Stopped = false }) }

// WasTermed reports whether the harness has sent SIGTERM.
func (p *Proc) WasTermed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Termed
}

// IsStopped reports whether the harness has it SIGSTOPped.
func (p *Proc) IsStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Stopped
}

// WaitExit waits up to d for the process to exit and reports whether it did.
func (p *Proc) WaitExit(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// Snapshot returns a copy of the harness's record, safe to read after the process ended.
func (p *Proc) Snapshot() ProcRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ProcRecord{ID: p.ID, PID: p.PID(), Args: p.Args, LogPath: p.LogPath, StartMono: p.StartMono,
		EndMono: p.EndMono, KilledMono: p.KilledMono, Termed: p.Termed, ExitCode: p.ExitCode, Signal: p.Signal}
}

// ProcRecord is the plain-data view of a Proc used by the checks.
type ProcRecord struct {
	ID         int
	PID        int
	Args       []string
	LogPath    string
	StartMono  int64
	EndMono    int64
	KilledMono int64
	Termed     bool
	ExitCode   int
	Signal     string
}
