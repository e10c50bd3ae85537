package console

import (
	"os"

	"golang.org/x/sys/windows"
)

// attachConsole is kernel32!AttachConsole, which golang.org/x/sys/windows does not wrap.
var attachConsole = windows.NewLazySystemDLL("kernel32.dll").NewProc("AttachConsole")

// attachParentProcess is ATTACH_PARENT_PROCESS ((DWORD)-1).
const attachParentProcess = ^uint32(0)

// attach calls AttachConsole(ATTACH_PARENT_PROCESS) and reopens the standard handles on the
// console (CONOUT$/CONIN$). Handles already redirected by the parent (a pipe or file, e.g.
// `routinely status --json > out.json`) are valid and kept as they are.
func attach() bool {
	if r, _, _ := attachConsole.Call(uintptr(attachParentProcess)); r == 0 {
		return false // started from Explorer or a shortcut: no console, nothing to print to
	}
	reopen := func(std uint32, name string, flag int, f **os.File) {
		if h, err := windows.GetStdHandle(std); err == nil && h != 0 && h != windows.InvalidHandle {
			if _, err := windows.GetFileType(h); err == nil {
				*f = os.NewFile(uintptr(h), name)
				return
			}
		}
		if c, err := os.OpenFile(name, flag, 0); err == nil {
			*f = c
		}
	}
	reopen(windows.STD_OUTPUT_HANDLE, "CONOUT$", os.O_WRONLY, &os.Stdout)
	reopen(windows.STD_ERROR_HANDLE, "CONOUT$", os.O_WRONLY, &os.Stderr)
	reopen(windows.STD_INPUT_HANDLE, "CONIN$", os.O_RDONLY, &os.Stdin)
	return true
}
