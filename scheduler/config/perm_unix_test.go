//go:build !windows

package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// commandConfig has one shell routine (refused from a file others can change) and one notify
// routine (kept either way).
const commandConfig = `[[routine]]
name = "cmd"
every = "1h"
shell = "true"

[[routine]]
name = "note"
every = "1h"
notify = { title = "x" }
`

// otherUID is a uid no test file starts with; chown to it needs root.
const otherUID = 4242

func chownOther(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another uid")
	}
	if err := os.Lchown(path, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
}

// mkdir creates directory path with mode as chmod(1) takes it (0o1777 is sticky), whatever the
// umask.
func mkdir(t *testing.T, path string, mode uint32) string {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func symlink(t *testing.T, target, link string) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// Every directory on the way to routines.toml (after symbolic links too) and the file itself
// are vetted: when another user could change what is read, the shell routine is disabled with
// the path, what is wrong and the fix; otherwise it is kept.
func TestLoadConfigVetsEveryDirectoryOnThePath(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the path to load; want is "" when the commands are kept, else the
		// substrings the refusal must contain ("$D" is the base directory).
		setup func(t *testing.T, base string) string
		want  []string
	}{
		{"private directory", func(t *testing.T, base string) string {
			return writeFile(t, filepath.Join(mkdir(t, base+"/d", 0o700), "routines.toml"), commandConfig)
		}, nil},
		{"group-writable directory", func(t *testing.T, base string) string {
			return writeFile(t, filepath.Join(mkdir(t, base+"/d", 0o770), "routines.toml"), commandConfig)
		}, []string{"$D/d is writable by other users (mode 0770)", "fix: chmod go-w $D/d"}},
		{"world-writable parent of a private directory", func(t *testing.T, base string) string {
			mkdir(t, base+"/shared", 0o777)
			return writeFile(t, filepath.Join(mkdir(t, base+"/shared/mine", 0o700), "routines.toml"), commandConfig)
		}, []string{"$D/shared is writable by other users (mode 0777), who can replace $D/shared/mine"}},
		{"sticky world-writable directory, your file", func(t *testing.T, base string) string {
			return writeFile(t, filepath.Join(mkdir(t, base+"/tmp", 0o1777), "routines.toml"), commandConfig)
		}, nil},
		{"sticky world-writable directory, another user's file", func(t *testing.T, base string) string {
			p := writeFile(t, filepath.Join(mkdir(t, base+"/tmp", 0o1777), "routines.toml"), commandConfig)
			chownOther(t, p)
			return p
		}, []string{"$D/tmp is writable by other users (mode 1777), who can replace $D/tmp/routines.toml"}},
		{"directory owned by another user", func(t *testing.T, base string) string {
			d := mkdir(t, base+"/theirs", 0o755)
			p := writeFile(t, filepath.Join(d, "routines.toml"), commandConfig)
			chownOther(t, d)
			return p
		}, []string{"$D/theirs is owned by ", "uid 4242", ", who can replace $D/theirs/routines.toml", "fix: keep routines.toml in a directory of your own"}},
		{"file owned by another user", func(t *testing.T, base string) string {
			p := writeFile(t, filepath.Join(mkdir(t, base+"/d", 0o700), "routines.toml"), commandConfig)
			chownOther(t, p)
			return p
		}, []string{"$D/d/routines.toml is owned by ", "uid 4242", ", not you", "fix: make it yours: cp "}},
		{"group-writable file", func(t *testing.T, base string) string {
			p := writeFile(t, filepath.Join(mkdir(t, base+"/d", 0o700), "routines.toml"), commandConfig)
			if err := os.Chmod(p, 0o620); err != nil {
				t.Fatal(err)
			}
			return p
		}, []string{"$D/d/routines.toml is group- or world-writable (mode 0620)", "fix: chmod go-w $D/d/routines.toml"}},
		{"symbolic link to a private file (dotfiles)", func(t *testing.T, base string) string {
			real := writeFile(t, filepath.Join(mkdir(t, base+"/dotfiles", 0o700), "routines.toml"), commandConfig)
			return symlink(t, real, filepath.Join(mkdir(t, base+"/cfg", 0o700), "routines.toml"))
		}, nil},
		{"relative symbolic link with ..", func(t *testing.T, base string) string {
			writeFile(t, filepath.Join(mkdir(t, base+"/dotfiles", 0o700), "routines.toml"), commandConfig)
			return symlink(t, "../dotfiles/./routines.toml", filepath.Join(mkdir(t, base+"/cfg", 0o700), "routines.toml"))
		}, nil},
		{"symbolic link into a writable directory", func(t *testing.T, base string) string {
			real := writeFile(t, filepath.Join(mkdir(t, base+"/shared", 0o777), "routines.toml"), commandConfig)
			return symlink(t, real, filepath.Join(mkdir(t, base+"/cfg", 0o700), "routines.toml"))
		}, []string{"$D/shared is writable by other users (mode 0777), who can replace $D/shared/routines.toml"}},
		{"symbolic link kept in a writable directory", func(t *testing.T, base string) string {
			real := writeFile(t, filepath.Join(mkdir(t, base+"/mine", 0o700), "routines.toml"), commandConfig)
			return symlink(t, real, filepath.Join(mkdir(t, base+"/shared", 0o777), "routines.toml"))
		}, []string{"$D/shared is writable by other users (mode 0777), who can replace $D/shared/routines.toml"}},
		{"chain of links, the middle one in a writable directory", func(t *testing.T, base string) string {
			real := writeFile(t, filepath.Join(mkdir(t, base+"/mine", 0o700), "routines.toml"), commandConfig)
			mid := symlink(t, real, filepath.Join(mkdir(t, base+"/shared", 0o777), "link"))
			return symlink(t, mid, filepath.Join(mkdir(t, base+"/cfg", 0o700), "routines.toml"))
		}, []string{"$D/shared is writable by other users (mode 0777), who can replace $D/shared/link"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(mkdir(t, filepath.Join(t.TempDir(), "base"), 0o700))
			if err != nil {
				t.Fatal(err)
			}
			path := c.setup(t, base)
			cfg, err := LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Routine("note") == nil {
				t.Fatalf("the notify routine was dropped: %v", cfg.Problems)
			}
			if c.want == nil {
				if cfg.Routine("cmd") == nil || len(cfg.Problems) > 0 {
					t.Fatalf("shell routine refused from a safe path: %v", cfg.Problems)
				}
				return
			}
			if cfg.Routine("cmd") != nil || len(cfg.Problems) != 1 {
				t.Fatalf("shell routine kept, or not one problem: %v", cfg.Problems)
			}
			p := cfg.Problems[0]
			msg := p.String()
			if !strings.HasPrefix(msg, path+":1:3: routine \"cmd\" disabled: ") || !strings.Contains(msg, "run commands as you") {
				t.Errorf("problem does not say where and why: %s", msg)
			}
			for _, w := range c.want {
				if w = strings.ReplaceAll(w, "$D", base); !strings.Contains(msg, w) {
					t.Errorf("problem lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

// A FIFO, a directory, a file over the size limit and a symbolic link loop are refused as a
// whole, without blocking and without reading past the limit.
func TestLoadConfigRefusesWhatIsNotARoutinesFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := writeFile(t, filepath.Join(dir, "big.toml"), "# "+strings.Repeat("x", MaxConfigBytes)+"\n")
	loop := symlink(t, "loop.toml", filepath.Join(dir, "loop.toml"))
	for path, want := range map[string]string{
		fifo: fifo + ": " + fifo + " is a named pipe (FIFO), not a regular file; routines.toml must be a regular file",
		dir:  dir + ": is a directory, not a routines file",
		big:  big + ": is larger than 1024 KiB, the most a routines file may be",
		loop: loop + ": cannot read: resolve " + loop + ": too many levels of symbolic links",
	} {
		done := make(chan error, 1)
		go func() { _, err := LoadConfig(path); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrConfig) || err.Error() != want {
				t.Errorf("LoadConfig(%s) = %v, want ErrConfig %q", filepath.Base(path), err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadConfig(%s) blocked", filepath.Base(path))
		}
	}
}

// Windows vets no mode bits (perm_windows.go): refusing a world-writable routines.toml is Unix's.
// What reaches the network (ping) is refused with the commands; a notification is kept.
func TestLoadConfigRefusesCommandsFromWritableFile(t *testing.T) {
	p := writeConfig(t, goodConfig)
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Routine("morning-briefing") != nil || cfg.Routine("heartbeat") != nil || cfg.Routine("evening") == nil {
		t.Fatalf("run or ping routine kept, or notify dropped: %v", cfg.Routines)
	}
	if len(cfg.Problems) != 2 || !strings.Contains(cfg.Problems[0].Message, "world-writable") ||
		!strings.Contains(cfg.Problems[0].Message, "others run commands") ||
		!strings.Contains(cfg.Problems[1].Message, "others send requests from your machine") {
		t.Fatalf("problems: %v", cfg.Problems)
	}
}

// untrustedConfig reaches the network and a secret in every way a routines file can: a [hub]
// whose token file is another secret of yours, a watch and a ping; and a notify, which reaches
// neither.
const untrustedConfig = `[hub]
url = "nats://127.0.0.1:14222"
token_file = "creds"

[[routine]]
name = "page"
every = "1h"
watch = { url = "http://127.0.0.1:1/" }

[[routine]]
name = "beat"
every = "1h"
ping = { url = "http://127.0.0.1:1/" }

[[routine]]
name = "note"
every = "1h"
notify = { title = "x" }
`

// A file another user could change grants nothing that user could not do: its [hub], watch and
// ping are refused, each at its line:col with why and the fix, as commands are; the hub counts
// as unusable, so the routines are not run alone instead; the notify routine is kept. The same
// file from a private directory keeps everything.
func TestUntrustedFileReachesNoNetworkOrSecret(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shared := writeFile(t, filepath.Join(mkdir(t, base+"/shared", 0o777), "routines.toml"), untrustedConfig)
	cfg, err := LoadConfig(shared)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hub != nil || !cfg.HubInvalid || len(cfg.Routines) != 1 || cfg.Routine("note") == nil {
		t.Fatalf("hub %+v (invalid %v), routines %v: want no hub, invalid, only note", cfg.Hub, cfg.HubInvalid, cfg.Routines)
	}
	why := base + "/shared is writable by other users (mode 0777), who can replace " + shared
	fix := "; fix: chmod go-w " + base + "/shared, or keep routines.toml in a directory only you can write"
	want := []string{
		shared + `:5:3: routine "page" disabled: ` + why + ", so it would let others send requests from your machine and network as you" + fix,
		shared + `:10:3: routine "beat" disabled: ` + why + ", so it would let others send requests from your machine and network as you" + fix,
		shared + `:1:2: [hub] refused: ` + why + ", so it would let others send your hub token to a server of their choosing" + fix,
	}
	if len(cfg.Problems) != len(want) {
		t.Fatalf("problems %v, want %d", cfg.Problems, len(want))
	}
	for i, w := range want {
		if got := cfg.Problems[i].String(); got != w {
			t.Errorf("problem %d:\n got %s\nwant %s", i, got, w)
		}
	}
	// The last good version keeps the refusal.
	again, err := FromSnapshot(cfg.Snapshot())
	if err != nil || again.Hub != nil || !again.HubInvalid || len(again.Routines) != 1 {
		t.Fatalf("from the snapshot: %+v, %v", again, err)
	}

	private := writeFile(t, filepath.Join(mkdir(t, base+"/mine", 0o700), "routines.toml"), untrustedConfig)
	if cfg, err = LoadConfig(private); err != nil || cfg.Hub == nil || cfg.HubInvalid || len(cfg.Routines) != 3 || len(cfg.Problems) != 0 {
		t.Fatalf("from a private directory: %+v, %v", cfg, err)
	}
}

// The token file is read only when it is a regular file inside the directory of routines.toml
// with its links resolved, yours and private: a symbolic link to another secret, a directory
// link leading out, a FIFO (without blocking) and a file others can read or write are refused
// with what to do.
func TestHubTokenFileVetted(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := mkdir(t, base+"/cfg", 0o700)
	secrets := mkdir(t, base+"/home", 0o700)
	creds := writeFile(t, filepath.Join(secrets, ".git-credentials"), "https://me:pw@example\n")
	hubOf := func(tokenFile string) *Hub {
		t.Helper()
		cfg, err := Parse(filepath.Join(cfgDir, "routines.toml"), []byte(fmt.Sprintf("[hub]\nurl = \"nats://127.0.0.1:4222\"\ntoken_file = %q\n", tokenFile)))
		if err != nil || cfg.Hub == nil {
			t.Fatalf("parse: %v %v", err, cfg.Problems)
		}
		return cfg.Hub
	}
	symlink(t, creds, filepath.Join(cfgDir, "link.token"))
	symlink(t, secrets, filepath.Join(cfgDir, "keys"))
	if err := syscall.Mkfifo(filepath.Join(cfgDir, "fifo.token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(writeFile(t, filepath.Join(cfgDir, "open.token"), "t\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cfgDir, "good.token"), "s3cret\n")
	for file, want := range map[string]string{
		"link.token":            "is a symbolic link",
		"keys/.git-credentials": "leads to " + creds + ", outside " + cfgDir,
		"fifo.token":            "is a named pipe (FIFO)",
		"open.token":            "can be read or written by others (mode 0640): chmod 600 it",
	} {
		done := make(chan error, 1)
		go func() { _, err := hubOf(file).ReadToken(); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNoHubToken) || !strings.Contains(err.Error(), want) {
				t.Errorf("token_file %s: %v, want ErrNoHubToken with %q", file, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("token_file %s: ReadToken blocked", file)
		}
	}
	if tok, err := hubOf("good.token").ReadToken(); err != nil || tok != "s3cret" {
		t.Fatalf("good token: %q %v", tok, err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(filepath.Join(cfgDir, "good.token"), otherUID, otherUID); err != nil {
			t.Fatal(err)
		}
		if _, err := hubOf("good.token").ReadToken(); !errors.Is(err, ErrNoHubToken) || !strings.Contains(err.Error(), "uid 4242") {
			t.Fatalf("another user's token file: %v", err)
		}
	}
}
