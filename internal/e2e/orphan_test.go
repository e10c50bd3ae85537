//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stampConfig is an every-3s routine whose run writes its own record into dir: "start ID EPOCH"
// to dir/stamps when it starts, "end ID" when its 6 s sleep is over and "term ID" if it gets
// SIGTERM, its pids (shell, sleep) to dir/pids/ID, and, at its start, "alive ID PID" for any
// process of an earlier run that still runs. The file's line order is the order of the events.
// SIGPIPE is ignored: once a killed owner's end of the output pipe is closed, the shell's own
// "Terminated" notice for its killed sleep would otherwise end it before its TERM trap stamps.
func stampConfig(dir string) string {
	if err := os.MkdirAll(filepath.Join(dir, "pids"), 0o700); err != nil {
		panic(err)
	}
	return fmt.Sprintf(`
[[routine]]
name = "slow"
every = "3s"
overlap = "skip"
timeout = "60s"
shell = '''
d=%q
id=$ROUTINELY_RUN_ID
for f in "$d"/pids/*; do
  [ -f "$f" ] || continue
  for p in $(cat "$f"); do
    st=$(ps -o stat= -p "$p" 2>/dev/null)
    case "$st" in ""|Z*) ;; *) echo "alive $id $p $st" >> "$d/stamps" ;; esac
  done
done
echo "$$" > "$d/pids/$id"
trap '' PIPE
trap 'echo "term $id" >> "$d/stamps"; exit 143' TERM
echo "start $id $ROUTINELY_EPOCH" >> "$d/stamps"
sleep 6 &
echo "$!" >> "$d/pids/$id"
wait $!
echo "end $id" >> "$d/stamps"
'''
`, dir)
}

// stamp is one line of the stamps file.
type stamp struct{ what, id, epoch string }

func readStamps(t *testing.T, dir string) []stamp {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "stamps"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []stamp
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		s := stamp{what: f[0], id: f[1]}
		if len(f) > 2 {
			s.epoch = f[2]
		}
		out = append(out, s)
	}
	return out
}

// waitStamp waits until a stamp satisfies ok and returns it.
func waitStamp(t *testing.T, dir, want string, ok func(stamp) bool) stamp {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for {
		for _, s := range readStamps(t, dir) {
			if ok(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the stamps after %s: %+v", want, ownDeadline, readStamps(t, dir))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkNoOverlap fails the test for any process of an earlier run seen alive by a later run,
// and for any run that started while another had started and not yet ended (in file order).
func checkNoOverlap(t *testing.T, stamps []stamp) {
	t.Helper()
	open := ""
	for _, s := range stamps {
		switch s.what {
		case "alive":
			t.Errorf("run %s started while a process of an earlier run was still running: %+v", s.id, s)
		case "start":
			if open != "" {
				t.Errorf("run %s started while run %s was running", s.id, open)
			}
			open = s.id
		case "end", "term":
			if s.id == open {
				open = ""
			}
		}
	}
}

// pidsOf returns the pids run id wrote (its shell, then its sleep).
func pidsOf(t *testing.T, dir, id string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pids", id))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// processRunning reports whether pid runs (a zombie, awaiting its reaper, has ended).
func processRunning(pid string) bool {
	out, _ := exec.Command("ps", "-o", "stat=", "-p", pid).Output()
	st := strings.TrimSpace(string(out))
	return st != "" && !strings.HasPrefix(st, "Z")
}

// historyOf returns the routine's runs from `history --json`.
func historyOf(t *testing.T, home, routine string) []runOut {
	t.Helper()
	stdout, stderr, code := run(t, home, "history", routine, "--json")
	var hist []runOut
	if err := json.Unmarshal([]byte(stdout), &hist); err != nil || code != 0 {
		t.Fatalf("history --json: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	return hist
}

// The repro: an every-3s routine with overlap = "skip" runs a 6 s shell; its owner is SIGKILLed
// 2 s into the run and a standby takes over. The run's shell and sleep (in their own process
// group, out of reach of the SIGKILL) end before the new owner starts any run of the routine,
// no two runs overlap, and history says the run was interrupted and ended by the new owner.
func TestOwnerKilledMidRunItsProcessesEndBeforeTheNextRun(t *testing.T) {
	dir := t.TempDir()
	home := newHome(t, stampConfig(dir))
	owner := start(t, home, "daemon")
	first := waitOwner(t, home, owner.pid())
	standby := start(t, home, "daemon", "--wait")
	standby.waitStderr("Standing by", ownDeadline)

	a := waitStamp(t, dir, "first run's start", func(s stamp) bool { return s.what == "start" })
	time.Sleep(2 * time.Second)
	owner.signal(syscall.SIGKILL)
	owner.wait(cmdTimeout)
	oldPIDs := pidsOf(t, dir, a.id)
	next := waitOwner(t, home, standby.pid())
	if next.Owner.Epoch <= first.Owner.Epoch {
		t.Fatalf("standby owns epoch %d after epoch %d", next.Owner.Epoch, first.Owner.Epoch)
	}
	epoch := fmt.Sprint(next.Owner.Epoch)
	b := waitStamp(t, dir, "the new owner's first run", func(s stamp) bool { return s.what == "start" && s.epoch == epoch })
	for _, pid := range oldPIDs {
		if processRunning(pid) {
			t.Errorf("pid %s of the killed owner's run %s still runs after the new owner's run %s started", pid, a.id, b.id)
		}
	}
	standby.signal(syscall.SIGTERM) // drains run b
	if code := standby.wait(cmdTimeout); code != 0 {
		t.Fatalf("new owner: exit %d on SIGTERM", code)
	}

	stamps := readStamps(t, dir)
	checkNoOverlap(t, stamps)
	var termA, startB, endA = -1, -1, -1
	for i, s := range stamps {
		switch {
		case s.what == "term" && s.id == a.id:
			termA = i
		case s.what == "end" && s.id == a.id:
			endA = i
		case s.what == "start" && s.id == b.id:
			startB = i
		}
	}
	if termA < 0 || endA >= 0 || termA > startB {
		t.Errorf("run %s: term at line %d, end at line %d; the new owner's run %s started at line %d; want term before the start, no end:\n%+v",
			a.id, termA+1, endA+1, b.id, startB+1, stamps)
	}

	var got *runOut
	for _, r := range historyOf(t, home, "slow") {
		if fmt.Sprint(r.ID) == a.id {
			got = &r
		}
	}
	want := fmt.Sprintf("its processes were still running and were ended by the new owner (epoch %s)", epoch)
	if got == nil || got.Outcome != "interrupted" || !strings.Contains(got.Reason, want) {
		t.Fatalf("history of run %s: %+v; want interrupted, reason containing %q", a.id, got, want)
	}
	text, _, _ := run(t, home, "history", "slow")
	if !strings.Contains(text, want) {
		t.Errorf("history does not show the reason %q:\n%s", want, text)
	}
}

// A sleeping owner is alive: SIGSTOPped 1 s into a run, it keeps the guard. The standby does not
// take over and nobody touches the run: its processes run to their end while the owner sleeps,
// and once the owner is continued it records the run as a success.
func TestStoppedOwnerKeepsItsRunsAndTheGuard(t *testing.T) {
	dir := t.TempDir()
	home := newHome(t, stampConfig(dir))
	owner := start(t, home, "daemon")
	first := waitOwner(t, home, owner.pid())
	standby := start(t, home, "daemon", "--wait")
	standby.waitStderr("Standing by", ownDeadline)

	a := waitStamp(t, dir, "first run's start", func(s stamp) bool { return s.what == "start" })
	time.Sleep(time.Second)
	owner.signal(syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			_ = owner.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	waitStamp(t, dir, "the run's end while its owner sleeps", func(s stamp) bool { return s.what == "end" && s.id == a.id })
	time.Sleep(2 * time.Second) // the standby has had every chance to move
	s := status(t, home)
	if s.Owner == nil || s.Owner.PID != owner.pid() || s.Owner.Epoch != first.Owner.Epoch {
		t.Fatalf("while the owner sleeps, status names %+v; want pid %d epoch %d", s.Owner, owner.pid(), first.Owner.Epoch)
	}
	for _, st := range readStamps(t, dir) {
		if st.what == "term" || (st.what == "start" && st.id != a.id) {
			t.Fatalf("something moved while the owner slept: %+v", readStamps(t, dir))
		}
	}
	if !standby.running() {
		t.Fatal("the standby exited while the owner slept")
	}

	owner.signal(syscall.SIGCONT)
	stopped = false
	for deadline := time.Now().Add(ownDeadline); ; time.Sleep(100 * time.Millisecond) {
		var got runOut
		for _, r := range historyOf(t, home, "slow") {
			if fmt.Sprint(r.ID) == a.id {
				got = r
			}
		}
		if got.Outcome == "success" && got.Epoch == first.Owner.Epoch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s after the owner was continued: %+v; want success by epoch %d", a.id, got, first.Owner.Epoch)
		}
	}
	standby.signal(syscall.SIGTERM)
	standby.wait(cmdTimeout)
	owner.signal(syscall.SIGTERM)
	owner.wait(cmdTimeout)
	checkNoOverlap(t, readStamps(t, dir))
}
