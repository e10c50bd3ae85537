package scheduler

import (
	"bytes"
	"os"
	"strconv"
)

// procStat returns the state (field 3) and process group id (field 5) of pid from
// /proc/PID/stat (proc(5)). ok is false when pid has no entry or the line is malformed.
func procStat(pid string) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name (field 2) may contain spaces and parentheses: split after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgid, err = strconv.Atoi(string(f[2]))
	return f[0][0], pgid, err == nil
}

// isZombie reports whether pid has exited and waits to be reaped (state Z, or X while it goes).
func isZombie(pid int) bool {
	state, _, ok := procStat(strconv.Itoa(pid))
	return ok && (state == 'Z' || state == 'X')
}

// groupHasLiveMember reports whether a process that is not a zombie has process group id pgid.
// kill(2) cannot tell: it succeeds for a group of zombies, and an orphaned zombie lasts until
// its new parent (init, a subreaper) gets round to reaping it.
func groupHasLiveMember(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true // cannot tell: kill(2) said the group exists
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		if state, g, ok := procStat(n); ok && g == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}
