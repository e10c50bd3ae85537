//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// NoFollow is added to every open of OpenRegular, and by callers that open a state file
// themselves (the guard lock). O_NONBLOCK: open(2) of a FIFO for reading waits for a writer,
// forever if none comes; with it the open returns at once (it changes nothing for a regular
// file). O_NOFOLLOW: a symbolic link in the last component fails the open (ELOOP) instead of
// opening, or creating, whatever it points to.
const NoFollow = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// openFile is os.OpenFile: a rename over a file never disturbs its readers on Unix.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
