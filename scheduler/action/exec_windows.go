//go:build windows

package action

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// shellCommand runs script with cmd.exe /S /C "script". cmd.exe does not follow the argv
// quoting that exec uses, so the raw command line is passed as well (SysProcAttr.CmdLine).
func shellCommand(script string) (argv []string, cmdLine string) {
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = `C:\Windows\System32\cmd.exe`
	}
	return []string{comspec, "/S", "/C", script}, `"` + comspec + `" /S /C "` + script + `"`
}

// procTree is a command's process tree on Windows: a Job Object that every process the child
// starts belongs to, so a cancelled run can end all of them (TerminateJobObject). While the run
// is in flight the job is JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: the owner holds its only handle,
// so when the owner dies (killed, crashed) the kernel closes the handle and ends the whole tree —
// a run never outlives its owner. When the run ends normally, close lifts that limit before it
// closes the handle, to match Unix: what a command leaves running after a normal exit is left
// alone. The child is assigned right after it starts, so a grandchild started in that first instant
// could escape the job (Go cannot start a process suspended and resume it); the next owner's
// check (scheduler/orphans.go) still finds it by its run token. The child is also
// the root of a new console process group, so terminate can send it CTRL_BREAK — Windows has no
// SIGTERM; a GUI child, or a Routinely without a console, does not get it and is ended at the
// end of the grace.
type procTree struct {
	mu  sync.Mutex
	job windows.Handle // 0 until attach succeeds
}

func newProcTree(cmd *exec.Cmd, cmdLine string) *procTree {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP, CmdLine: cmdLine}
	return &procTree{}
}

// attach puts p into a new Job Object. On failure the tree falls back to ending p alone
// (exec kills the leader when the grace ends).
func (t *procTree) attach(p *os.Process) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	defer windows.CloseHandle(h)
	// Kill on close first: a process is in the job from the moment it is assigned.
	if err := setKillOnClose(job, true); err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	t.mu.Lock()
	t.job = job
	t.mu.Unlock()
}

// terminate asks the child's console group to stop (CTRL_BREAK, best effort).
// Without a shared console it fails; the job is then ended after the grace, so the error is
// not reported.
func (t *procTree) terminate(p *os.Process) error {
	_ = windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.Pid))
	return nil
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION (not in x/sys/windows).
type jobAccounting struct {
	TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses, TotalTerminatedProcesses     uint32
}

// reap waits until the job has no live process or deadline passes, then terminates the job.
func (t *procTree) reap(deadline time.Time) {
	t.mu.Lock()
	job := t.job
	t.mu.Unlock()
	if job == 0 {
		return // the leader is already gone; without a job there is nothing else to reach
	}
	for time.Now().Before(deadline) {
		var acct jobAccounting
		err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
			uintptr(unsafe.Pointer(&acct)), uint32(unsafe.Sizeof(acct)), nil)
		if err != nil || acct.ActiveProcesses == 0 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	_ = windows.TerminateJobObject(job, 1)
}

// close releases the job handle after lifting kill-on-close, so processes still in the job (a
// background process the command left) keep running. If the limit cannot be lifted, closing the
// handle ends them: the job is kept open instead, until this process exits.
func (t *procTree) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job != 0 {
		if err := setKillOnClose(t.job, false); err == nil {
			_ = windows.CloseHandle(t.job)
		}
		t.job = 0
	}
}

// setKillOnClose sets or clears JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE on job (the job's only limit).
func setKillOnClose(job windows.Handle, on bool) error {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if on {
		info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	}
	_, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	return err
}
