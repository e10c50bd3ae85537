//go:build linux

package torture

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Routine is one routine of the chaos config, with what the checks need to enumerate its slots.
type Routine struct {
	Name  string
	Every time.Duration // grid period for `every` routines (0 for cron)
	// CronSecond is the second of each minute a `cron = "S * * * * *"` routine fires at.
	CronSecond int
	Extra      string // further TOML keys (timeout, overlap)
	Tail       string // shell appended after the logging echo (e.g. a sleep)
}

// Routines are the five routines of the chaos config: a fast and a slower grid, a per-minute cron with
// a seconds field, a 4 s run that overlaps its own next slot (skip), and a 10 s sleeper killed by
// its 2 s timeout (auto-pause off: it must keep being killed, not be paused after 5 timeouts).
var Routines = []Routine{
	{Name: "tick-1s", Every: time.Second},
	{Name: "tick-3s", Every: 3 * time.Second},
	{Name: "cron-minute", CronSecond: 7},
	{Name: "long-4s", Every: 2 * time.Second, Extra: `overlap = "skip"`, Tail: "sleep 4"},
	{Name: "timeout-2s", Every: 5 * time.Second, Extra: "timeout = \"2s\"\nauto_pause_after = 0", Tail: "sleep 10"},
}

// WriteConfig writes routines.toml into home. Every run appends one line
// "routine slot epoch shell-pid daemon-pid" to shared, before any sleep, so the file is the
// record of side effects as they happened. Around it, each run stamps its own lifetime into
// stamps (ReadStamps): "start routine slot epoch shell-pid uptime" first, "end ..." last, also
// when it is ended by SIGTERM (a timeout, or the next owner ending a dead owner's run). uptime
// is /proc/uptime's first field: seconds since boot, to 10 ms, one clock for every process.
func WriteConfig(home, shared, stamps string) error {
	var b strings.Builder
	b.WriteString("# written by the chaos harness (internal/torture)\n[defaults]\n")
	b.WriteString("catch_up = \"once\"\ncatch_up_window = \"1h\"\ntimeout = \"30s\"\n")
	for _, r := range Routines {
		fmt.Fprintf(&b, "\n[[routine]]\nname = %q\n", r.Name)
		if r.Every > 0 {
			fmt.Fprintf(&b, "every = %q\n", r.Every.String())
		} else {
			fmt.Fprintf(&b, "cron = \"%d * * * * *\"\n", r.CronSecond)
		}
		if r.Extra != "" {
			b.WriteString(r.Extra + "\n")
		}
		// Builtins only (read, echo): a SIGTERM cannot cut a stamp in half, and the trap is set
		// before the start stamp, so a run that stamped its start always stamps its end. SIGPIPE
		// is ignored: once a killed owner's end of the output pipe is closed, the shell's
		// "Terminated" notice for its killed sleep would otherwise end it before the trap runs.
		stamp := fmt.Sprintf(`stamp() { read up _ < /proc/uptime; echo "$1 $ROUTINELY_ROUTINE $ROUTINELY_SLOT $ROUTINELY_EPOCH $$ $up" >> '%s'; }`, stamps)
		sh := stamp + `; trap '' PIPE; trap 'stamp end; exit 143' TERM; stamp start; ` +
			fmt.Sprintf(`echo "$ROUTINELY_ROUTINE $ROUTINELY_SLOT $ROUTINELY_EPOCH $$ $PPID" >> '%s'`, shared)
		if r.Tail != "" {
			sh += "; " + r.Tail
		}
		sh += "; stamp end"
		fmt.Fprintf(&b, "shell = %s\n", tomlString(sh))
	}
	return os.WriteFile(home+"/routines.toml", []byte(b.String()), 0o600)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
