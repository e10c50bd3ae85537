package e2e

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// The test process must have a console for sendSignal's Ctrl-Break to reach its children, which
// inherit it: GenerateConsoleCtrlEvent only reaches processes attached to the caller's console.
// Run from a terminal, go test has one; run by a CI service or under Wine from a pipe it may not
// (GenerateConsoleCtrlEvent then fails with ERROR_INVALID_ACCESS), so one is allocated:
// AllocConsole fails, changing nothing, when the process already has a console. Go's os.Stdout
// and os.Stderr keep the handles they were given at start-up, so the test's output still goes
// where go test reads it.
func init() { _, _, _ = windows.NewLazySystemDLL("kernel32.dll").NewProc("AllocConsole").Call() }

// signalableAttr starts a process in a process group of its own, so that a console control
// event can be sent to it alone (GenerateConsoleCtrlEvent takes a process group id, and the
// group's leader is that process).
func signalableAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// sendSignal does to p what sig does on Unix, as Windows can:
//   - SIGINT, SIGTERM: CTRL_BREAK_EVENT to p's process group (Ctrl-Break in its console; a group
//     of its own ignores Ctrl-C), which Go delivers to the program as os.Interrupt: the graceful
//     stop a person at the daemon's console gets;
//   - SIGKILL: TerminateProcess, a crash for the process (no code of it runs again).
//
// Any other signal is an error.
func sendSignal(p *os.Process, sig syscall.Signal) error {
	switch sig {
	case syscall.SIGINT, syscall.SIGTERM:
		return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.Pid))
	case syscall.SIGKILL:
		return p.Kill()
	}
	return fmt.Errorf("signal %v has no Windows counterpart here", sig)
}

// suspend stops every thread of p as a sleeping machine would (NtSuspendProcess, the Windows
// counterpart of SIGSTOP): it runs no code and keeps its handles, and so the guard.
func (p *proc) suspend() {
	p.t.Helper()
	if err := callOnProcess(ntSuspendProcess, p.pid()); err != nil {
		p.t.Fatalf("NtSuspendProcess pid %d: %v", p.pid(), err)
	}
}

// resume continues a suspended p (NtResumeProcess, the counterpart of SIGCONT).
func (p *proc) resume() {
	p.t.Helper()
	if err := callOnProcess(ntResumeProcess, p.pid()); err != nil {
		p.t.Fatalf("NtResumeProcess pid %d: %v", p.pid(), err)
	}
}

// gracefulStopUntestable says why a graceful stop cannot be sent to a child here, or "". Wine
// 8.0 delivers no console control event to another process: GenerateConsoleCtrlEvent fails with
// ERROR_INVALID_ACCESS when the processes share Wine's console of a pipe, and ERROR_INVALID_HANDLE
// with a terminal or after AllocConsole. Real Windows delivers Ctrl-Break to a process group on
// the caller's console, so there the stop is sent and its exit checked.
func gracefulStopUntestable() string {
	if ntdll.NewProc("wine_get_version").Find() == nil {
		return "Wine delivers no Ctrl-Break to another process (GenerateConsoleCtrlEvent fails)"
	}
	return ""
}

// ntdll's NtSuspendProcess and NtResumeProcess suspend and resume every thread of a process:
// undocumented, but stable since Windows XP and implemented by Wine.
var (
	ntdll            = windows.NewLazySystemDLL("ntdll.dll")
	ntSuspendProcess = ntdll.NewProc("NtSuspendProcess")
	ntResumeProcess  = ntdll.NewProc("NtResumeProcess")
)

// callOnProcess opens pid with PROCESS_SUSPEND_RESUME and calls fn(handle), returning the
// OpenProcess error or fn's NTSTATUS as an error.
func callOnProcess(fn *windows.LazyProc, pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SUSPEND_RESUME, false, uint32(pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if st, _, _ := fn.Call(uintptr(h)); st != 0 {
		return windows.NTStatus(st)
	}
	return nil
}
