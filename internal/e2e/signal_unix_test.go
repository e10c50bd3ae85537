//go:build unix

package e2e

import (
	"os"
	"syscall"
)

// signalableAttr: every process can be signalled on Unix; nothing to set.
func signalableAttr() *syscall.SysProcAttr { return nil }

// gracefulStopUntestable is "": every stop signal reaches a child on Unix.
func gracefulStopUntestable() string { return "" }

// sendSignal sends sig to p.
func sendSignal(p *os.Process, sig syscall.Signal) error { return p.Signal(sig) }

// suspend stops p (SIGSTOP), as a closed laptop lid does: it keeps the guard.
func (p *proc) suspend() { p.t.Helper(); p.signal(syscall.SIGSTOP) }

// resume continues a suspended p (SIGCONT).
func (p *proc) resume() { p.t.Helper(); p.signal(syscall.SIGCONT) }
