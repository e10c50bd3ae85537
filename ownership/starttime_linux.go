package ownership

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// startTicks reads field 22 (starttime, clock ticks after boot) of /proc/PID/stat (proc(5)). It
// never changes for a process and does not depend on the wall clock.
func startTicks(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces and parentheses: split after the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}
