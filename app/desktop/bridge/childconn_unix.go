//go:build unix

package bridge

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ChildConn is the window process's connection to the app: its stdin and stdout, which the
// Spawner made the two ends of its pipe pair. It moves them to new close-on-exec descriptors,
// so nothing the window process starts inherits them (the child must see the app die), and
// puts /dev/null on fd 0 and stderr on fd 1, so that a library printing to stdout cannot
// corrupt the stream. It returns an error if a descriptor cannot be moved.
func ChildConn() (*Conn, error) {
	in, err := moveFD(0, "/dev/null", os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	out, err := moveFD(1, "", 0)
	if err != nil {
		in.Close()
		return nil, err
	}
	// os.Stdin and os.Stdout name fds 0 and 1, which now are /dev/null and stderr.
	return NewConn(in, out), nil
}

// moveFD duplicates fd to a close-on-exec descriptor, then replaces fd with path opened with
// flag, or with stderr when path is "".
func moveFD(fd int, path string, flag int) (*os.File, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("window process: duplicate fd %d: %w", fd, err)
	}
	src := int(os.Stderr.Fd())
	if path != "" {
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			unix.Close(dup)
			return nil, fmt.Errorf("window process: %w", err)
		}
		defer f.Close()
		src = int(f.Fd())
	}
	if err := unix.Dup2(src, fd); err != nil {
		unix.Close(dup)
		return nil, fmt.Errorf("window process: replace fd %d: %w", fd, err)
	}
	return os.NewFile(uintptr(dup), fmt.Sprintf("app-pipe-%d", fd)), nil
}
