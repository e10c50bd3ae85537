package ownership

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// guardHolder reports, without touching the lock, whether dir/owner.lock is locked and by which
// process. It reads /proc/locks (proc(5)), whose lines name the locking pid and the locked file
// as MAJOR:MINOR:INODE. Because that pid is the process that took the lock, it is checked: if it
// is gone (a child kept an inherited descriptor), the descriptors in /proc/*/fd name the holder.
func guardHolder(dir string) (held bool, pid int, err error) {
	path := filepath.Join(dir, lockName)
	fi, err := os.Lstat(path) // never follows a symlink in owner.lock's place: nobody can own through it
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("stat %s: %w", path, err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	want := procLocksFile(st)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false, 0, fmt.Errorf("read /proc/locks: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; blocked waiters have "->" and are skipped.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || fields[5] != want {
			continue
		}
		held = true
		pid, _ = strconv.Atoi(fields[4])
		break
	}
	if err := sc.Err(); err != nil {
		return false, 0, fmt.Errorf("read /proc/locks: %w", err)
	}
	if held && (pid <= 0 || !pidExists(pid)) {
		pid = openerOf(st.Dev, st.Ino)
	}
	return held, pid, nil
}

// procLocksFile is how /proc/locks names the file st is of: MAJOR:MINOR:INODE, the device
// numbers in hex (proc(5)).
func procLocksFile(st *syscall.Stat_t) string {
	return fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
}

// openerOf returns a process that has the file (dev, ino) open, found through /proc/*/fd, or 0.
func openerOf(dev, ino uint64) int {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			var st syscall.Stat_t
			if syscall.Stat(filepath.Join("/proc", p.Name(), "fd", fd.Name()), &st) == nil &&
				uint64(st.Dev) == dev && st.Ino == ino {
				return pid
			}
		}
	}
	return 0
}
