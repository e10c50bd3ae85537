//go:build unix

package scheduler

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// The next owner ends what an earlier owner's runs left running, with real processes: a shell
// leading its own process group (as the command action starts it) stands for the run of an
// owner that died mid-run, and a journal row claimed by epoch 1 is that run's record.

// quiet never fires while these tests run (the fake clock stays in June).
const quiet = "[[routine]]\nname = \"backup\"\ncron = \"0 0 1 1 *\"\nrun = [\"/bin/true\"]\n"

// orphanHarness returns a harness whose journal holds run id of routine backup, claimed and left
// running by epoch 1; the harness's own gate is epoch 2, the next owner.
func orphanHarness(t *testing.T) (*harness, int64) {
	t.Helper()
	h := newHarness(t, quiet, time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	if _, err := h.j.Acquire(1, time.Now()); err != nil {
		t.Fatal(err)
	}
	id, err := h.j.Claim(journal.Claim{Routine: "backup", Slot: time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC),
		Trigger: journal.TriggerSchedule, Outcome: journal.OutcomeRunning, Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	h.gate = newGate(2)
	return h, id
}

// group is a shell started as the leader of a new process group, reaped in the background (so
// that it does not linger as this test's zombie); the group is SIGKILLed at test end.
type group struct {
	pid    int
	exited chan struct{}
}

func startGroup(t *testing.T, script string, env ...string) *group {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &group{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(g.exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-g.pid, syscall.SIGKILL)
		<-g.exited
	})
	return g
}

// waitFile waits for path to hold a pid (written by a test script) and returns it.
func waitFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	eventually(t, path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// running reports whether pid is a live process (a zombie has ended: it only awaits its reaper).
func running(pid int) bool {
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		i := bytes.LastIndexByte(stat, ')')
		return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
	} else if _, err := os.Stat("/proc/self/stat"); err == nil {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

func identity(t *testing.T, pid int) ownership.ProcessIdentity {
	t.Helper()
	p, err := ownership.IdentifyProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// reasonOf returns run id's outcome and reason.
func reasonOf(t *testing.T, j *journal.Journal, id int64) (string, string) {
	t.Helper()
	r, err := j.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Outcome, r.Reason
}

// The recorded leader still runs (same pid, same start time): its whole group — the shell and
// the sleep it started — is gone by the time Start returns, before any routine is armed.
func TestOrphanGroupEndsBeforeTheNextOwnerStarts(t *testing.T) {
	h, id := orphanHarness(t)
	child := filepath.Join(t.TempDir(), "child.pid")
	g := startGroup(t, fmt.Sprintf(`sleep 60 & echo $! > %q; wait`, child))
	sleeper := waitFile(t, child)
	if err := h.j.RecordLeader(id, identity(t, g.pid)); err != nil {
		t.Fatal(err)
	}
	h.start()
	for _, pid := range []int{g.pid, sleeper} {
		if running(pid) {
			t.Errorf("pid %d of the earlier owner's run still runs after the next owner started", pid)
		}
	}
	outcome, reason := reasonOf(t, h.j, id)
	if outcome != journal.OutcomeInterrupted || !strings.Contains(reason, "were still running and were ended by the new owner (epoch 2)") {
		t.Fatalf("run recorded %s (%s)", outcome, reason)
	}
}

// A pid whose start time does not match the record belongs to another process (the pid was
// reused): it is never signalled, and the run's processes count as exited.
func TestOrphanPidReusedIsNeverSignalled(t *testing.T) {
	h, id := orphanHarness(t)
	g := startGroup(t, "sleep 60")
	other := identity(t, g.pid)
	other.StartMS -= 60_000
	if other.StartTicks != 0 {
		other.StartTicks -= 100 * 60
	}
	if err := h.j.RecordLeader(id, other); err != nil {
		t.Fatal(err)
	}
	h.start()
	time.Sleep(200 * time.Millisecond) // a signal, had one been sent, has landed
	if !running(g.pid) {
		t.Fatal("a process that merely has the recorded pid was ended")
	}
	outcome, reason := reasonOf(t, h.j, id)
	if outcome != journal.OutcomeInterrupted || !strings.HasSuffix(reason, "its processes had already exited") {
		t.Fatalf("run recorded %s (%s)", outcome, reason)
	}
}

// The run's processes had ended before the next owner came: nothing to end, and history says so
// — also when the leader has exited but is still a zombie awaiting its reaper (its pid and start
// time are still there).
func TestOrphanAlreadyExited(t *testing.T) {
	for _, zombie := range []bool{false, true} {
		t.Run(fmt.Sprintf("zombie=%v", zombie), func(t *testing.T) {
			h, id := orphanHarness(t)
			cmd := exec.Command("/bin/sh", "-c", "sleep 0.3")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			p := identity(t, cmd.Process.Pid)
			if zombie {
				defer func() { _ = cmd.Wait() }() // reaped only after the next owner's start
				eventually(t, "the leader to exit", func() bool { return !running(p.PID) })
			} else {
				_ = cmd.Wait()
			}
			if err := h.j.RecordLeader(id, p); err != nil {
				t.Fatal(err)
			}
			h.start()
			outcome, reason := reasonOf(t, h.j, id)
			if outcome != journal.OutcomeInterrupted || !strings.HasSuffix(reason, "its processes had already exited") {
				t.Fatalf("run recorded %s (%s)", outcome, reason)
			}
		})
	}
}

// The owner died after starting the run's process but before recording it: the process is
// found by the run's token, which only this journal's run carries — the same run id in another
// journal (another profile) is left alone.
func TestOrphanFoundByTokenWhenNotRecorded(t *testing.T) {
	h, id := orphanHarness(t)
	dir := t.TempDir()
	ours := startGroup(t, fmt.Sprintf(`sleep 60 & echo $! > %q; wait`, filepath.Join(dir, "ours")),
		RunTokenVar+"="+h.j.RunToken(id))
	oursChild := waitFile(t, filepath.Join(dir, "ours"))
	foreign := startGroup(t, "sleep 60", RunTokenVar+"=0123456789abcdef0123456789abcdef-"+strconv.FormatInt(id, 10))
	h.start()
	if running(ours.pid) || running(oursChild) {
		t.Error("the unrecorded run's processes still run after the next owner started")
	}
	if !running(foreign.pid) {
		t.Error("another journal's run with the same run id was ended")
	}
	outcome, reason := reasonOf(t, h.j, id)
	if outcome != journal.OutcomeInterrupted || !strings.Contains(reason, "ended by the new owner (epoch 2)") {
		t.Fatalf("run recorded %s (%s)", outcome, reason)
	}
}

// The leader exited (as a shell does on SIGPIPE once the dead owner's end of its output pipe is
// closed) while a process of its group lives on: the group id is still reserved, and a member
// with the run's token proves the group is the run's, so it is ended. A leaderless group whose
// members carry no token cannot be told from a group that took the number later: left alone.
func TestOrphanLeaderExitedGroupLivesOn(t *testing.T) {
	for _, withToken := range []bool{true, false} {
		t.Run(fmt.Sprintf("token=%v", withToken), func(t *testing.T) {
			h, id := orphanHarness(t)
			file := filepath.Join(t.TempDir(), "member")
			var env []string
			if withToken {
				env = append(env, RunTokenVar+"="+h.j.RunToken(id))
			}
			g := startGroup(t, fmt.Sprintf(`sleep 60 & echo $! > %q; sleep 0.3`, file), env...)
			leader := identity(t, g.pid)
			member := waitFile(t, file)
			<-g.exited
			if err := h.j.RecordLeader(id, leader); err != nil {
				t.Fatal(err)
			}
			h.start()
			time.Sleep(200 * time.Millisecond)
			outcome, reason := reasonOf(t, h.j, id)
			if withToken {
				if running(member) || !strings.Contains(reason, "ended by the new owner (epoch 2)") {
					t.Fatalf("member running %v; run recorded %s (%s)", running(member), outcome, reason)
				}
				return
			}
			if !running(member) || !strings.HasSuffix(reason, "its processes had already exited") {
				t.Fatalf("unverifiable group: member running %v; run recorded %s (%s)", running(member), outcome, reason)
			}
		})
	}
}

// Processes that ignore SIGTERM get SIGKILL once the grace has passed; Start waits for it.
func TestOrphanIgnoringTermIsKilledAfterTheGrace(t *testing.T) {
	h, id := orphanHarness(t)
	h.orphanGrace = 700 * time.Millisecond
	child := filepath.Join(t.TempDir(), "child.pid")
	// An ignored signal stays ignored across fork and exec: the sleep ignores SIGTERM too.
	g := startGroup(t, fmt.Sprintf(`trap '' TERM; sleep 60 & echo $! > %q; wait`, child))
	sleeper := waitFile(t, child)
	if err := h.j.RecordLeader(id, identity(t, g.pid)); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	h.start()
	if took := time.Since(began); took < h.orphanGrace {
		t.Errorf("Start returned after %v, before the %v grace: SIGTERM alone cannot have ended them", took, h.orphanGrace)
	}
	if running(g.pid) || running(sleeper) {
		t.Fatal("processes that ignore SIGTERM survived the next owner's start")
	}
	if _, reason := reasonOf(t, h.j, id); !strings.Contains(reason, "ended by the new owner (epoch 2)") {
		t.Fatalf("reason %q", reason)
	}
}

// A real command run records its process (pid and start time) in the journal when it starts,
// and carries the run's token in its environment: what the next owner needs should this owner
// die mid-run.
func TestCommandRunRecordsItsProcessAndToken(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	h := newHarness(t, fmt.Sprintf(`[[routine]]
name = "hello"
cron = "0 0 1 1 *"
shell = 'echo "$$ $%s" > %s'
`, RunTokenVar, out), time.Now())
	e, err := NewEngine(EngineOptions{ConfigPath: h.cfg, Journal: h.j, Gate: h.gate, Clock: h.clock,
		Logger: slog.New(slog.DiscardHandler), WakeClock: newFakeWallMono(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Stop(t.Context()) }()
	req, err := h.j.RequestRun("hello")
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	eventually(t, "request answered", func() bool { id, _ = h.j.RequestResult(req); return id > 0 })
	eventually(t, "run finished", func() bool { r, _ := h.j.Run(id); return r.Outcome == journal.OutcomeSuccess })
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	var token string
	if _, err := fmt.Sscan(string(b), &pid, &token); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	if token != h.j.RunToken(id) || !strings.HasSuffix(token, "-"+strconv.FormatInt(id, 10)) || len(token) < 33 {
		t.Errorf("the run saw %s=%q, want %q", RunTokenVar, token, h.j.RunToken(id))
	}
	var gotPID, startMS int64
	db, err := sql.Open("sqlite", journalURI(t, filepath.Join(h.dir, "journal.db"), url.Values{"mode": {"ro"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if err := db.QueryRow(`SELECT leader_pid, leader_start_ms FROM runs WHERE id = ?`, id).Scan(&gotPID, &startMS); err != nil {
		t.Fatalf("recorded process of run %d: %v", id, err)
	}
	if int(gotPID) != pid || startMS < time.Now().Add(-time.Minute).UnixMilli() {
		t.Fatalf("recorded pid %d started at %d ms, want pid %d (the shell) started within the last minute", gotPID, startMS, pid)
	}
}

// A run cut short ends what it left outside its process group: with overlap = "replace", a
// second request cancels the first run, whose shell had started a process in a session of its
// own (setsid). That process carries the run's token and is gone by the time the first run is
// recorded `interrupted`.
func TestReplacedRunEndsItsSetsidEscapee(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "escapee")
	h := newHarness(t, fmt.Sprintf(`[[routine]]
name = "daemonizes"
cron = "0 0 1 1 *"
overlap = "replace"
shell = '''
[ -e %[1]s ] || setsid sh -c 'echo $$ > %[1]s; exec sleep 1000' </dev/null >/dev/null 2>&1 &
sleep 30
'''
`, pidFile), time.Now())
	e, err := NewEngine(EngineOptions{ConfigPath: h.cfg, Journal: h.j, Gate: h.gate, Clock: h.clock,
		Logger: slog.New(slog.DiscardHandler), WakeClock: newFakeWallMono(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond) // cut the second run
		defer cancel()
		_ = e.Stop(ctx)
	}()
	first := requestAndWaitID(t, h, "daemonizes")
	escapee := waitFile(t, pidFile)
	_ = requestAndWaitID(t, h, "daemonizes") // replaces the first
	var r journal.Run
	eventually(t, "the first run recorded", func() bool { r, _ = h.j.Run(first); return r.Outcome != journal.OutcomeRunning })
	if r.Outcome != journal.OutcomeInterrupted || r.Reason != "replaced" {
		t.Fatalf("first run: %s (%s), want interrupted (replaced)", r.Outcome, r.Reason)
	}
	if running(escapee) {
		t.Fatalf("the replaced run's setsid escapee (pid %d) still runs after the run was recorded", escapee)
	}
}

// requestAndWaitID asks for a run of routine now and returns its run id once claimed.
func requestAndWaitID(t *testing.T, h *harness, routine string) int64 {
	t.Helper()
	req, err := h.j.RequestRun(routine)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	eventually(t, "request answered", func() bool { id, _ = h.j.RequestResult(req); return id > 0 })
	return id
}
