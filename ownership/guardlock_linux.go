package ownership

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/routinely/routinely/internal/atomicfile"
)

// guardFDFloor is the lowest descriptor number the guard's lock is taken on (Linux): above any
// descriptor an owner opens in practice (its journal, watches, routines' pipes), so the guard is
// the owner's highest-numbered file when it dies, and the first the kernel releases
// (docs/design.md §3.1).
const guardFDFloor = 1000

// fdLock is the guard's lock on Linux: flock(2) on a descriptor of owner.lock that it opens
// itself and places at guardFDFloor or above. It is gofrs/flock's Flock but for that placement,
// which gofrs/flock cannot make (it does not let its caller choose or see the descriptor). Why
// the number matters: when a process dies, Linux closes its descriptors in ascending order and
// queues each file's final release, then runs the queue last in, first out (task_work_run, the
// kernel's kernel/task_work.c): the highest-numbered descriptor is released first. Releasing an
// inotify instance waits for an SRCU grace period (fsnotify_destroy_group, fs/notify/group.c),
// 13-25 ms on Linux 6.18 here: every watch an owner opened after the guard held the lock that
// much longer after a SIGKILL, in 2-3 % of the bench's crash recoveries (p99 17-20 ms;
// BenchmarkCrashRecovery and `make bench` measure it). Like Flock, the descriptor is open only
// while locked (or while Lock waits), and one fdLock is used by one goroutine at a time.
type fdLock struct {
	path string
	f    *os.File // the placed descriptor while open; nil when closed
}

// newLockFile returns the unlocked lock of the guard file path.
func newLockFile(path string) lockFile { return &fdLock{path: path} }

// Lock waits for the exclusive lock (flock(2) LOCK_EX). It returns nil once held, or the error
// of opening path (an *fs.PathError) or of flock(2) (an errno); the descriptor is closed then.
func (l *fdLock) Lock() error { return l.lock(unix.LOCK_EX) }

// TryLock takes the exclusive lock if nobody holds it: (true, nil) when held now, (false, nil)
// when another open file description holds it (the descriptor is closed again), or the errors
// of Lock.
func (l *fdLock) TryLock() (bool, error) {
	err := l.lock(unix.LOCK_EX | unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// lock opens path (open) and flocks it with how, retrying on EINTR; on failure the descriptor is
// closed and the error returned as Lock says.
func (l *fdLock) lock(how int) error {
	if l.f == nil {
		if err := l.open(); err != nil {
			return err
		}
	}
	for {
		err := unix.Flock(int(l.f.Fd()), how)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			l.close()
		}
		return err
	}
}

// open opens path as gofrs/flock would for the guard (os.OpenFile: created 0600 when missing,
// never through a symbolic link, never blocking on a named pipe: atomicfile.NoFollow;
// close-on-exec, so children never share the lock), then moves the descriptor to guardFDFloor or
// above. When that move fails (a descriptor limit of 1000 or less) the lock is taken on the low
// descriptor: it then works as before, only without the early release at death. It returns
// os.OpenFile's error (an *fs.PathError).
func (l *fdLock) open() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDONLY|atomicfile.NoFollow, 0o600)
	if err != nil {
		return err
	}
	if high, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, guardFDFloor); err == nil {
		_ = f.Close()
		f = os.NewFile(uintptr(high), l.path)
	}
	l.f = f
	return nil
}

// close closes the descriptor (and with it the lock, if it was the last one).
func (l *fdLock) close() {
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// Stat returns the fstat of the open descriptor (the os package's FileInfo, which os.SameFile
// needs), or an *fs.PathError: fs.ErrClosed when the descriptor is not open, else fstat's error.
func (l *fdLock) Stat() (fs.FileInfo, error) {
	if l.f == nil {
		return nil, &fs.PathError{Op: "stat", Path: l.path, Err: fs.ErrClosed}
	}
	return l.f.Stat()
}

// Unlock lets the lock go (flock(2) LOCK_UN) and closes the descriptor. It returns nil when not
// locked, or the flock error: the descriptor then stays open, and locked.
func (l *fdLock) Unlock() error {
	if l.f == nil {
		return nil
	}
	if err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN); err != nil {
		return err
	}
	l.close()
	return nil
}

var growTable sync.Once

// prepareGuardFD grows this process's descriptor table past guardFDFloor now, so that placing
// the guard's descriptor does not grow it on a standby's recovery path: in a process with
// several threads the kernel waits for an RCU grace period to grow the table (expand_fdtable,
// the kernel's fs/file.c), ~10 ms here. The table never shrinks; it costs 8 KiB. Best effort:
// a failure here only leaves that wait to the first lock.
func prepareGuardFD() {
	growTable.Do(func() {
		fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		if high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, guardFDFloor); err == nil {
			_ = unix.Close(high)
		}
		_ = unix.Close(fd)
	})
}
