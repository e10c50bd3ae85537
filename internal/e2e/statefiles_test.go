//go:build unix

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// Files in the state directory are input the owner cannot trust: named pipes, symlinks and
// forged requests there must not wedge, mislead or end it; and the directory and its files are
// private to their user.

// promptly bounds a command that must not block: far above its normal run time on a loaded
// machine, far below the 60 s after which run gives up.
const promptly = 15 * time.Second

// timedRun is run, failing the test when the command took longer than promptly.
func timedRun(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	began := time.Now()
	stdout, stderr, code := run(t, home, args...)
	if d := time.Since(began); d > promptly {
		t.Fatalf("routinely %v took %s (blocked?); stderr:\n%s", args, d, stderr)
	}
	return stdout, stderr, code
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// eventuallyTrue polls cond every 50 ms, failing the test after ownDeadline.
func eventuallyTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: still waiting for %s", ownDeadline, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FIFOs in place of takeover.json, owner.json and the reply: the owner keeps running and
// answers SIGTERM, status and --kill-wedged return promptly, and the next owner is not frozen by
// FIFOs in place of owner.json, epoch, takeover.json and the reply. A FIFO owner.lock is refused
// with what to do.
func TestFIFOStateFilesDoNotWedge(t *testing.T) {
	home := newHome(t, hourly)
	// A heartbeat far away: owner.json stays the FIFO the test puts there.
	d := start(t, home, "daemon", "--heartbeat", "10m")
	s1 := waitOwner(t, home, d.pid())
	dir := s1.StateDir

	// The owner's file watch makes it read takeover.json at once: it must see garbage, remove it
	// and carry on.
	mkfifo(t, filepath.Join(dir, "takeover.json"))
	eventuallyTrue(t, "the owner to remove the FIFO takeover.json", func() bool {
		_, err := os.Lstat(filepath.Join(dir, "takeover.json"))
		return errors.Is(err, fs.ErrNotExist)
	})

	mkfifo(t, filepath.Join(dir, "owner.json"))
	mkfifo(t, filepath.Join(dir, "takeover.reply.json"))
	stdout, stderr, _ := timedRun(t, home, "status", "--json")
	var s statusOut
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || !s.Held {
		t.Fatalf("status with a FIFO owner.json: %v %+v\n%s", err, s, stderr)
	}
	_, stderr, code := timedRun(t, home, "daemon", "--takeover", "--kill-wedged", "--timeout", "2s", "--wedge-threshold", "1s")
	if code != 75 {
		t.Fatalf("--kill-wedged with a FIFO owner.json: exit %d, want 75 (not provably wedged); stderr:\n%s", code, stderr)
	}
	if !d.running() {
		t.Fatal("the owner was killed or died")
	}

	d.signal(syscall.SIGTERM)
	if code := d.wait(ownDeadline); code != 0 {
		t.Fatalf("SIGTERM after the FIFOs: exit %d, want 0", code)
	}

	for _, name := range []string{"owner.json", "epoch", "takeover.json", "takeover.reply.json"} {
		mkfifo(t, filepath.Join(dir, name))
	}
	next := start(t, home, "daemon")
	s2 := waitOwner(t, home, next.pid())
	if s2.Owner.Epoch != s1.Owner.Epoch+1 {
		t.Fatalf("next owner's epoch %d, want %d (the journal still bounds it)", s2.Owner.Epoch, s1.Owner.Epoch+1)
	}
	next.signal(syscall.SIGTERM)
	if code := next.wait(ownDeadline); code != 0 {
		t.Fatalf("next owner on SIGTERM: exit %d", code)
	}

	lock := filepath.Join(dir, "owner.lock")
	mkfifo(t, lock)
	_, stderr, code = timedRun(t, home, "daemon")
	if code != 77 || !strings.Contains(stderr, "rm "+lock) {
		t.Fatalf("daemon with a FIFO owner.lock: exit %d, want 77 with `rm %s`; stderr:\n%s", code, lock, stderr)
	}
	timedRun(t, home, "status")
}

// An epoch file that is a symlink is replaced, never written through: its target keeps its
// content.
func TestEpochSymlinkNotFollowed(t *testing.T) {
	home := newHome(t, hourly)
	d := start(t, home, "daemon")
	s1 := waitOwner(t, home, d.pid())
	d.signal(syscall.SIGTERM)
	if code := d.wait(ownDeadline); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	victim := filepath.Join(t.TempDir(), "precious.txt")
	const content = "a file of the user's that Routinely must not truncate\n"
	if err := os.WriteFile(victim, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	epoch := filepath.Join(s1.StateDir, "epoch")
	if err := os.Remove(epoch); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, epoch); err != nil {
		t.Fatal(err)
	}
	next := start(t, home, "daemon")
	s2 := waitOwner(t, home, next.pid())
	if got, err := os.ReadFile(victim); err != nil || string(got) != content {
		t.Fatalf("the symlink's target now holds %q (%v)", got, err)
	}
	fi, err := os.Lstat(epoch)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("epoch after the next owner: %v %v, want a regular file", fi, err)
	}
	if data, _ := os.ReadFile(epoch); strings.TrimSpace(string(data)) != fmt.Sprintf("%020d", s2.Owner.Epoch) {
		t.Fatalf("epoch file holds %q, want epoch %d", data, s2.Owner.Epoch)
	}
}

// A forged takeover request naming a live process of the same user that is no challenger: the
// owner approves and lets go, sees that nobody takes the routines, says why and takes them
// back at a new epoch; its routine keeps running.
func TestForgedTakeoverRequestKeepsOwner(t *testing.T) {
	ticks := filepath.Join(t.TempDir(), "ticks.txt")
	home := newHome(t, fmt.Sprintf("[[routine]]\nname = \"tick\"\nevery = \"1s\"\nshell = 'echo tick >> %q'\n", ticks))
	d := start(t, home, "daemon", "--heartbeat", "200ms")
	s1 := waitOwner(t, home, d.pid())
	eventuallyTrue(t, "the routine to run", func() bool { return countLines(ticks) > 0 })

	bystander := exec.Command("sleep", "120")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bystander.Process.Kill(); _ = bystander.Wait() })
	forgeRequest(t, s1.StateDir, bystander.Process.Pid)

	d.waitStderr("taking the routines back", ownDeadline)
	if !strings.Contains(d.stderr.String(), fmt.Sprintf("requester pid %d did not take the routines", bystander.Process.Pid)) {
		t.Errorf("the owner did not say why it takes the routines back:\n%s", d.stderr.String())
	}
	s2 := waitStatus(t, home, "the daemon owning again at a new epoch, healthy", func(s statusOut) bool {
		return s.Owner != nil && s.Owner.PID == d.pid() && s.Owner.State == "owning" && s.Owner.Epoch > s1.Owner.Epoch && s.ExitCode == 0
	})
	if !d.running() {
		t.Fatal("the owner exited")
	}
	n := countLines(ticks)
	eventuallyTrue(t, "the routine to keep running after the take-back", func() bool { return countLines(ticks) >= n+2 })
	if s := status(t, home); s.Owner == nil || s.Owner.PID != d.pid() || s.Owner.Epoch != s2.Owner.Epoch {
		t.Fatalf("owner after the take-back: %+v, want pid %d at epoch %d", s.Owner, d.pid(), s2.Owner.Epoch)
	}
}

// forgeRequest writes takeover.json as a challenger would, addressed to the owner of dir, but
// naming pid (some other live process of this user) as the requester.
func forgeRequest(t *testing.T, dir string, pid int) {
	t.Helper()
	var rec struct {
		Token string `json:"token"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "owner.json"))
	if err != nil || json.Unmarshal(data, &rec) != nil || rec.Token == "" {
		t.Fatalf("owner.json: %v\n%s", err, data)
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		t.Fatal(err)
	}
	startMS, err := p.CreateTime()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	now := time.Now()
	req := map[string]any{
		"id": "forged-1", "target_token": rec.Token,
		"requester": map[string]any{"pid": pid, "pid_start_ms": startMS, "host": host, "uid": os.Getuid(),
			"role": "daemon", "command": []string{"sleep", "120"}},
		"requested_at": now, "expires_at": now.Add(time.Minute), "reason": "forged by the test",
	}
	data, err = json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "takeover.json.forged")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "takeover.json")); err != nil {
		t.Fatal(err)
	}
}

func countLines(path string) int {
	data, _ := os.ReadFile(path)
	return strings.Count(string(data), "\n")
}

// A state directory that other users can read or search is refused with 77 and the exact
// chmod, by owners and observers alike, and the message is not the config one.
func TestStateDirMustBePrivate(t *testing.T) {
	for _, mode := range []os.FileMode{0o755, 0o750, 0o711} {
		home := newHome(t, hourly)
		if err := os.Chmod(home, mode); err != nil {
			t.Fatal(err)
		}
		real, err := filepath.EvalSymlinks(home)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"daemon"}, {"status"}, {"run", "hourly-note"}, {"history"}} {
			stdout, stderr, code := run(t, home, args...)
			fix := "`chmod 700 " + real + "`"
			if code != 77 || !strings.Contains(stderr, fix) || stdout != "" {
				t.Errorf("mode %04o, %v: exit %d, want 77 with %s;\nstdout: %s\nstderr: %s", mode, args, code, fix, stdout, stderr)
			}
			if strings.Contains(stderr, "fix the file") || strings.Contains(stderr, "validate") {
				t.Errorf("mode %04o, %v: a permission error with the config advice:\n%s", mode, args, stderr)
			}
		}
	}
}

// Under umask 000 every file the owner creates, the journal (the routines' output) with its
// -wal and -shm included, is 0600; another local user can read none of them even where the
// directory lets them in; and a state directory owned by another user is refused.
func TestStateFilesPrivateUnderUmask000(t *testing.T) {
	home := newHome(t, `
[[routine]]
name = "secret"
every = "1h"
catch_up = "skip"
shell = 'echo API_KEY=hunter2'
`)
	cmd := exec.Command("sh", "-c", `umask 000 && exec "$0" "$@"`, bin, "--home", home, "daemon")
	cmd.Env = testEnv()
	d := startCmd(t, cmd, "routinely daemon (umask 000)")
	s := waitOwner(t, home, d.pid())
	if _, stderr, code := run(t, home, "run", "secret"); code != 0 {
		t.Fatalf("run secret: exit %d\n%s", code, stderr)
	}
	if stdout, _, _ := run(t, home, "history", "secret", "--json"); !strings.Contains(stdout, "success") {
		t.Fatalf("the run was not recorded:\n%s", stdout)
	}

	files := map[string]os.FileMode{}
	err := filepath.WalkDir(s.StateDir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() == "routines.toml" { // routines.toml is the test's
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		files[path] = fi.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"journal.db", "journal.db-wal", "journal.db-shm", "owner.json", "owner.lock", "epoch"} {
		if _, ok := files[filepath.Join(s.StateDir, name)]; !ok {
			t.Errorf("%s was not created (files: %v)", name, files)
		}
	}
	for path, mode := range files {
		if mode.Perm() != 0o600 {
			t.Errorf("%s is mode %04o under umask 000, want 0600", path, mode.Perm())
		}
	}

	uid, gid := throwawayUser(t)
	// Let the other user through every directory down to the files, so that only the files'
	// own modes keep them out; a world-readable file proves they got that far.
	for p := s.StateDir; p != filepath.Dir(p) && p != filepath.Clean(os.TempDir()); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	control := filepath.Join(s.StateDir, "control.txt")
	if err := os.WriteFile(control, []byte("readable\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(control, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := readAs(uid, gid, control); err != nil {
		t.Fatalf("the other user cannot reach the state directory at all, so the check below proves nothing: %v\n%s", err, out)
	}
	for path := range files {
		if out, err := readAs(uid, gid, path); err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("another user read %s (API_KEY in it: %v): %v %.60q", path, strings.Contains(out, "API_KEY"), err, out)
		}
	}
	if err := os.Remove(control); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	d.signal(syscall.SIGTERM)
	if code := d.wait(ownDeadline); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}

	// A state directory owned by another user is not yours to use.
	if err := os.Chown(s.StateDir, uid, gid); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"daemon"}, {"status"}} {
		_, stderr, code := run(t, home, args...)
		if code != 77 || !strings.Contains(stderr, fmt.Sprintf("owned by uid %d", uid)) {
			t.Errorf("%v on a directory owned by uid %d: exit %d, want 77 naming the owner;\n%s", args, uid, code, stderr)
		}
	}
}

// readAs runs cat path as uid:gid and returns its combined output.
func readAs(uid, gid int, path string) (string, error) {
	cmd := exec.Command("cat", path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// throwawayUser adds a local user for this test, removed at cleanup, and returns its uid and gid.
// It skips the test when not run as root (CI runs as root).
func throwawayUser(t *testing.T) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to add a throwaway local user")
	}
	name := fmt.Sprintf("rtn-e2e-%d", os.Getpid())
	deadline := time.Now().Add(ownDeadline)
	for {
		// useradd takes a lock on /etc/passwd; another process adding a user at the same time
		// makes it fail with exit 1 ("cannot lock"): try again.
		out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name).CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) || !strings.Contains(string(out), "lock") {
			t.Fatalf("useradd %s: %v\n%s", name, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(func() {
		for end := time.Now().Add(ownDeadline); ; time.Sleep(200 * time.Millisecond) {
			out, err := exec.Command("userdel", name).CombinedOutput()
			if err == nil || time.Now().After(end) || !strings.Contains(string(out), "lock") {
				if err != nil {
					t.Errorf("userdel %s: %v\n%s", name, err, out)
				}
				return
			}
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}
