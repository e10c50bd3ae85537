package ownership

import "github.com/shirou/gopsutil/v4/process"

// pidExists asks the OS whether pid is in use (OpenProcess; access denied counts as existing
// inside gopsutil).
func pidExists(pid int) bool {
	ok, err := process.PidExists(int32(pid))
	return ok || err != nil
}
