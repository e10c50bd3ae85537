//go:build unix

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A cron that never matches and an interval past the maximum are refused by validate with
// FILE:LINE:COL (78), and the refused routine cannot be previewed; the other routine is valid.
func TestValidateRefusesScheduleThatNeverFiresOrOverflows(t *testing.T) {
	home := newHome(t, `[[routine]]
name = "ok"
every = "1h"
notify = { title = "x" }

[[routine]]
name = "feb-31"
cron = "0 0 31 2 *"
notify = { title = "x" }

[[routine]]
name = "huge"
every = "999999h"
notify = { title = "x" }
`)
	_, stderr, code := run(t, home, "validate")
	if code != 78 {
		t.Fatalf("validate: exit %d, want 78; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		`routines\.toml:8:1: routine "feb-31": cron "0 0 31 2 \*" never fires`,
		`routines\.toml:13:1: routine "huge": every must be a duration from 1s to 8784h \(366 days\), got "999999h"`,
		`2 problems; the other 1 routine runs`,
	} {
		if !regexp.MustCompile(want).MatchString(stderr) {
			t.Errorf("validate stderr does not match %s:\n%s", want, stderr)
		}
	}
	for _, name := range []string{"feb-31", "huge"} {
		if _, stderr, code := run(t, home, "preview", name); code != 78 || !strings.Contains(stderr, "routines.toml:") {
			t.Errorf("preview %s: exit %d, want 78 naming the problem; stderr:\n%s", name, code, stderr)
		}
	}
}

// A reload to a file with a never-matching cron leaves the owner working: the other routine
// keeps running, the problem is reported, and SIGTERM ends the daemon promptly.
func TestReloadToNeverFiringCronKeepsOthersRunning(t *testing.T) {
	ticks := filepath.Join(t.TempDir(), "ticks")
	tick := fmt.Sprintf("[[routine]]\nname = \"tick\"\nevery = \"1s\"\nshell = 'echo x >> %q'\n", ticks)
	home := newHome(t, tick)
	d := start(t, home, "daemon")
	waitOwner(t, home, d.pid())
	waitLines(t, ticks, 1)

	writeConfig(t, home, tick+"\n[[routine]]\nname = \"feb-31\"\ncron = \"0 0 31 2 *\"\nnotify = { title = \"x\" }\n")
	waitLines(t, ticks, len(readLines(t, ticks))+3) // spans the reload (150 ms after the write)
	d.waitStderr("routines.toml applied", ownDeadline)
	waitStatus(t, home, "the reload's problem at routines.toml:8:1", func(s statusOut) bool {
		return len(s.Problems) == 1 && s.Problems[0].Line == 8 && s.Problems[0].Col == 1
	})

	d.signal(syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
}

// A routines.toml reached through a directory another local user owns is refused for
// commands, by validate and by the daemon, with the path, what is wrong and the fix; the
// daemon still runs the file's other routines.
func TestConfigInAnotherUsersDirectoryIsRefused(t *testing.T) {
	other := newLocalUser(t)
	x := newXDGProfile(t, other)
	marker := filepath.Join(x.private, "ran")
	writeOwned(t, x.config, fmt.Sprintf(`[[routine]]
name = "backup"
every = "1s"
shell = 'echo ran >> %q'

[[routine]]
name = "note"
every = "1h"
notify = { title = "x" }
`, marker), 0, 0)
	want := fmt.Sprintf(`%s:1:3: routine "backup" disabled: %s is owned by %s (uid %d), who can replace %s, so it would let others run commands as you; fix: keep routines.toml in a directory of your own`,
		x.config, x.configDir, other.name, other.uid, x.config)

	for _, args := range [][]string{{"validate"}, {"validate", x.config}} {
		_, stderr, code := x.run(t, args...)
		if code != 78 || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, want 78 and\n%s\nstderr:\n%s", args, code, want, stderr)
		}
	}
	d := x.start(t, "daemon")
	d.waitStderr("Owning the routines (epoch 1): 2 routines from "+x.config+" (1 disabled, see '", ownDeadline)
	time.Sleep(2 * time.Second) // two slots of the refused routine
	d.signal(syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the refused routine ran")
	}
}

// The swap attack: another user who can write the directory of routines.toml puts their own
// file in place just before a reload reads it and takes it away before the old code checked
// the file's owner. Whatever the timing, their command never runs: what is read is vetted
// from the same open file. (Against the code that read the file and then stat'ed the path,
// this test had the attacker's command run as the owner in most of its five rounds.)
func TestConfigSwapByAnotherUserNeverRunsTheirCommand(t *testing.T) {
	other := newLocalUser(t)
	x := newXDGProfile(t, other)
	pwned := filepath.Join(x.private, "pwned")
	writeOwned(t, x.config, hourly, 0, 0)
	// A large file: parsing it holds the reload between its read and its check long enough
	// for the attacker's rename to land there.
	var evil strings.Builder
	fmt.Fprintf(&evil, "[[routine]]\nname = \"pwn\"\nevery = \"1s\"\nshell = 'echo pwned >> %q'\n", pwned)
	for i := range 8000 {
		fmt.Fprintf(&evil, "[[routine]]\nname = \"pad-%d\"\nevery = \"1h\"\nnotify = { title = \"x\" }\n", i)
	}
	writeOwned(t, filepath.Join(x.configDir, "evil.toml"), evil.String(), other.uid, other.gid)

	d := x.start(t, "daemon")
	d.waitStderr("Owning the routines (epoch 1)", ownDeadline)
	// Each round: the attacker's file in, a reload starts reading it ~150 ms later (the
	// watcher's debounce), it is renamed away mid-reload, and held away for longer than the
	// evil routine's interval before the owner's file comes back.
	attack := exec.Command("/bin/sh", "-c", `cd "$1" && for i in 1 2 3 4 5; do
		mv routines.toml good.toml && mv evil.toml routines.toml && sleep 0.2 &&
		mv routines.toml evil.toml && sleep 1.3 && mv good.toml routines.toml && sleep 0.3 || exit 1
	done`, "attack", x.configDir)
	attack.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(other.uid), Gid: uint32(other.gid)}}
	if out, err := attack.CombinedOutput(); err != nil {
		t.Fatalf("attacker: %v\n%s", err, out)
	}
	time.Sleep(time.Second)
	d.signal(syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	if data, err := os.ReadFile(pwned); err == nil {
		t.Fatalf("the attacker's routine ran as the owner %d times", bytes.Count(data, []byte("\n")))
	}
	// The attack was real: the daemon read the attacker's file and refused its command.
	if !strings.Contains(d.stderr.String(), "routines.toml applied\" routines=8000 problems=1") {
		t.Fatalf("the daemon never read the attacker's file; stderr:\n%s", d.stderr.String())
	}
}

// A deeply nested routines.toml (40 KB took 6 s and 646 MB) is refused at once with its
// position, by validate and by the daemon.
func TestDeeplyNestedConfigIsRefusedAtOnce(t *testing.T) {
	home := newHome(t, "x = "+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+"\n")
	want := "routines.toml:1:37: arrays or inline tables nested deeper than 32 levels"
	for _, cmd := range []string{"validate", "daemon"} {
		_, stderr, code := run(t, home, cmd)
		if code != 78 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, want 78 and %q; stderr:\n%s", cmd, code, want, stderr)
		}
	}
}

// A routines.toml of one dotted key or one table header 524,000 parts deep (1 MiB; it took a
// reloading owner from 17 MB to about 1 GB, and every status 1.8 s) is refused at its position
// by validate and by the daemon, as any too-deep file is.
func TestDeepDottedKeysAreRefusedAtOnce(t *testing.T) {
	deep := strings.Repeat("a.", 524_000) + "a"
	for name, file := range map[string]string{
		"dotted key":   deep + " = 1\n",
		"table header": "[" + deep + "]\n",
	} {
		t.Run(name, func(t *testing.T) {
			home := newHome(t, file)
			for _, cmd := range []string{"validate", "daemon"} {
				_, stderr, code := run(t, home, cmd)
				if code != 78 || !strings.Contains(stderr, "routines.toml:1:") || !strings.Contains(stderr, "keys nested deeper than 32") {
					t.Errorf("%s: exit %d, want 78 naming routines.toml:1:COL and the limit of 32; stderr:\n%.2000s", cmd, code, stderr)
				}
			}
		})
	}
}

// waitLines waits until file has at least n lines.
func waitLines(t *testing.T, file string, n int) {
	t.Helper()
	deadline := time.Now().Add(ownDeadline)
	for {
		data, _ := os.ReadFile(file)
		if got := bytes.Count(data, []byte("\n")); got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has fewer than %d lines after %s:\n%s", file, n, ownDeadline, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// localUser is a throwaway account for tests that need another local user.
type localUser struct {
	name     string
	uid, gid int
}

// newLocalUser adds a system user without a home or login shell, removed at test end. It
// skips the test when not root or without useradd.
func newLocalUser(t *testing.T) localUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to add a local user")
	}
	useradd, err := exec.LookPath("useradd")
	if err != nil {
		t.Skip("needs useradd")
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "rtl-e2e-" + hex.EncodeToString(b)
	if out, err := exec.Command(useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return localUser{name: name, uid: uid, gid: gid}
}

// xdgProfile is a default-layout profile (no --home): routines.toml under XDG_CONFIG_HOME, in a
// directory owned by another user, and the state under XDG_STATE_HOME, private.
type xdgProfile struct {
	env       []string
	configDir string // $XDG_CONFIG_HOME/routinely, owned by the other user (mode 0755)
	config    string
	private   string // a directory only the test's user can write (for markers)
}

func newXDGProfile(t *testing.T, other localUser) xdgProfile {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The other user must reach their directory: open the path to it for traversal (its
	// directories stay writable only by the test's user).
	for dir := base; dir != filepath.Dir(dir) && strings.HasPrefix(dir, os.TempDir()+"/"); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	x := xdgProfile{configDir: filepath.Join(base, "config", "routinely"), private: filepath.Join(base, "private")}
	x.config = filepath.Join(x.configDir, "routines.toml")
	for _, dir := range []string{x.configDir, x.private, filepath.Join(base, "state")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(base, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(x.configDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(x.configDir, other.uid, other.gid); err != nil {
		t.Fatal(err)
	}
	x.env = append(testEnv(), "XDG_CONFIG_HOME="+filepath.Join(base, "config"), "XDG_STATE_HOME="+filepath.Join(base, "state"))
	return x
}

// run runs routinely args... in the profile to completion.
func (x xdgProfile) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Env = &stdout, &stderr, x.env
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("routinely %v did not finish in %s; stderr:\n%s", args, cmdTimeout, stderr.String())
	}
	return stdout.String(), stderr.String(), exitCode(err)
}

// start runs routinely args... in the profile in the background.
func (x xdgProfile) start(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = x.env
	return startCmd(t, cmd, fmt.Sprintf("routinely %v", args))
}

// writeOwned writes body to path (mode 0600) owned by uid:gid.
func writeOwned(t *testing.T, path, body string, uid, gid int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
}
