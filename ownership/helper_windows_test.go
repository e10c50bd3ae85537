package ownership

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/routinely/routinely/internal/proctest"
)

// osHelperModes: Windows adds none.
var osHelperModes = map[string]func() int{}

// lockHolderKnown: Windows has no /proc/locks; Status.HolderPID is 0 and the holder is known only
// through a believable owner record.
const lockHolderKnown = false

// spawnChildren starts two children (copies of the test binary that sleep a minute) that outlive
// this process: Windows does not end a process's children when it dies. It returns their pids.
func spawnChildren() ([]string, error) {
	var pids []string
	for range 2 {
		c, err := proctest.Start(proctest.Stderr, func() *exec.Cmd {
			c := exec.Command(os.Args[0], "-test.run=^$")
			c.Env = append(os.Environ(), envHelper+"=sleep")
			return c
		})
		if err != nil {
			return nil, err
		}
		pids = append(pids, fmt.Sprint(c.Process.Pid))
	}
	return pids, nil
}

// ntdll's NtSuspendProcess and NtResumeProcess suspend and resume every thread of a process,
// as the debugger and Process Explorer's "Suspend" do: the Windows counterpart of SIGSTOP and
// SIGCONT. They are undocumented but stable since Windows XP, and Wine implements them.
var (
	ntdll            = windows.NewLazySystemDLL("ntdll.dll")
	ntSuspendProcess = ntdll.NewProc("NtSuspendProcess")
	ntResumeProcess  = ntdll.NewProc("NtResumeProcess")
)

// suspend stops p as a sleeping machine would (NtSuspendProcess): it runs no code until resume.
func suspend(tb testing.TB, p *proc) {
	tb.Helper()
	if err := callOnProcess(ntSuspendProcess, p.pid()); err != nil {
		tb.Fatalf("NtSuspendProcess pid %d: %v", p.pid(), err)
	}
}

// resume continues a suspended p (NtResumeProcess).
func resume(tb testing.TB, p *proc) {
	tb.Helper()
	if err := callOnProcess(ntResumeProcess, p.pid()); err != nil {
		tb.Fatalf("NtResumeProcess pid %d: %v", p.pid(), err)
	}
}

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

// assertNoGuardHandle fails tb when any process still has owner.lock of dir open once owner (the
// guard's holder) has released and exited; kids are the processes that must not have inherited a
// handle to it. Windows cannot list another process's handles without the undocumented
// NtQuerySystemInformation, but an open with no sharing (dwShareMode 0) fails with
// ERROR_SHARING_VIOLATION while any handle to the file is open, so with the holder gone it
// proves that no child kept one.
func assertNoGuardHandle(tb testing.TB, dir string, owner *proc, kids []string) {
	tb.Helper()
	owner.stop()
	path, err := windows.UTF16PtrFromString(filepath.Join(dir, lockName))
	if err != nil {
		tb.Fatal(err)
	}
	h, err := windows.CreateFile(path, windows.GENERIC_READ, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		tb.Fatalf("owner.lock still open in another process (children %v): %v", kids, err)
	}
	_ = windows.CloseHandle(h)
}
