//go:build linux

package torture

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// crashMarker is how the Go runtime starts a crash report (or the race detector a race).
var crashMarker = regexp.MustCompile(`(?m)^(panic: |fatal error: |WARNING: DATA RACE)`)

// checkCrashes looks for Go crash reports in the daemons' logs.
func checkCrashes(ev Evidence) *Check {
	c := &Check{Name: "no daemon crashed"}
	for _, p := range ev.Procs {
		b, err := os.ReadFile(p.LogPath)
		if err != nil {
			continue
		}
		if m := crashMarker.Find(b); m != nil {
			c.Violations = append(c.Violations, fmt.Sprintf("pid %d: %q in %s", p.PID, m, p.LogPath))
		}
	}
	return c
}

// checkExits holds every daemon to its documented exit: 0 after SIGTERM or a handover; 75 only
// for a takeover that was denied or timed out; death by signal only from the harness's SIGKILL.
func checkExits(ev Evidence) *Check {
	c := &Check{Name: "documented exits"}
	codes := map[string]int{}
	for _, p := range ev.Procs {
		takeover := strings.Contains(strings.Join(p.Args, " "), "--takeover")
		var what string
		switch {
		case p.KilledMono != 0:
			what = "SIGKILLed"
		case p.EndMono == 0:
			what = "still running"
		case p.Signal != "":
			what = "died of " + p.Signal
		default:
			what = fmt.Sprintf("exit %d", p.ExitCode)
		}
		codes[what]++
		ok := what == "SIGKILLed" || what == "exit 0" || (takeover && what == "exit 75")
		if !ok {
			c.Violations = append(c.Violations, fmt.Sprintf("pid %d (%s): %s; log %s", p.PID, strings.Join(p.Args, " "), what, p.LogPath))
		}
	}
	c.Notes = append(c.Notes, fmt.Sprintf("%v", codes))
	return c
}
