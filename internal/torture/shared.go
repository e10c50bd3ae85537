//go:build linux

package torture

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// SideEffect is one line a routine's shell appended to the shared file.
type SideEffect struct {
	Routine   string
	Slot      time.Time
	Epoch     uint64
	ShellPID  int
	DaemonPID int // the shell's parent: the daemon that started the run (0 when unknown)
	Line      int
}

// ReadSideEffects parses the shared file ("routine slot epoch shell-pid parent-pid" per line).
// Malformed lines are returned as problems: they mean the environment promised to every run
// (ROUTINELY_ROUTINE, ROUTINELY_SLOT, ROUTINELY_EPOCH) was missing or wrong.
func ReadSideEffects(path string) (effects []SideEffect, problems []string, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 {
			problems = append(problems, fmt.Sprintf("shared.log:%d: malformed line %q", n, sc.Text()))
			continue
		}
		slot, err1 := time.Parse(time.RFC3339Nano, fs[1])
		epoch, err2 := strconv.ParseUint(fs[2], 10, 64)
		if err1 != nil || err2 != nil {
			problems = append(problems, fmt.Sprintf("shared.log:%d: bad slot or epoch in %q", n, sc.Text()))
			continue
		}
		e := SideEffect{Routine: fs[0], Slot: slot, Epoch: epoch, Line: n}
		e.ShellPID, _ = strconv.Atoi(fs[3])
		if len(fs) > 4 {
			e.DaemonPID, _ = strconv.Atoi(fs[4])
		}
		effects = append(effects, e)
	}
	return effects, problems, sc.Err()
}
