//go:build unix

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// quiet is how long a listener must see nothing for a test to say nothing was sent: a daemon
// contacts its hub within a second of starting, and an every = "1s" ping fires every second.
const quiet = 4 * time.Second

// connCounter is a TCP listener on 127.0.0.1 that counts the connections made to it (and
// closes them): a stand-in for another user's NATS server.
type connCounter struct {
	l     net.Listener
	conns atomic.Int64
}

func newConnCounter(t *testing.T) *connCounter {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &connCounter{l: l}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); <-done })
	return c
}

// requestCounter is an HTTP server on 127.0.0.1 that counts the requests it gets.
func requestCounter(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
	t.Cleanup(srv.Close)
	return srv, &n
}

// A routines.toml another local user can replace (its directory is theirs) gets no [hub]: the
// daemon never contacts the hub it names (the attack sent the owner's ~/.git-credentials
// there as the token), refuses to run the routines alone instead (exit 78) and says why at
// the [hub]'s line:col; validate says the same.
func TestUntrustedConfigNeverContactsItsHub(t *testing.T) {
	other := newLocalUser(t)
	x := newXDGProfile(t, other)
	nats := newConnCounter(t)
	writeOwned(t, filepath.Join(x.configDir, "hub.token"), "owner-secret\n", 0, 0)
	writeOwned(t, x.config, fmt.Sprintf("[hub]\nurl = \"nats://%s\"\ntoken_file = \"hub.token\"\n%s", nats.l.Addr(), hourly), other.uid, other.gid)
	want := fmt.Sprintf("%s:1:2: [hub] refused: %s is owned by %s (uid %d), who can replace %s, so it would let others send your hub token to a server of their choosing; fix: keep routines.toml in a directory of your own",
		x.config, x.configDir, other.name, other.uid, x.config)

	if _, stderr, code := x.run(t, "validate"); code != 78 || !strings.Contains(stderr, want) {
		t.Errorf("validate: exit %d, want 78 and\n%s\nstderr:\n%s", code, want, stderr)
	}
	d := x.start(t, "daemon")
	code, exited := exitWithin(d, ownDeadline)
	time.Sleep(quiet)
	if n := nats.conns.Load(); n > 0 {
		t.Fatalf("the hub of another user's file was contacted %d times", n)
	}
	if !exited || code != 78 || !strings.Contains(d.stderr.String(), want) {
		t.Fatalf("daemon: exited %v (code %d), want exit 78 and\n%s\nstderr:\n%s", exited, code, want, d.stderr.String())
	}
}

// exitWithin waits at most d for p to exit, and returns its exit code and whether it did.
func exitWithin(p *proc, d time.Duration) (code int, exited bool) {
	select {
	case <-p.done:
		return p.code, true
	case <-time.After(d):
		return 0, false
	}
}

// The watch and ping routines of a routines.toml another local user can replace never send
// their requests, while the daemon owns and runs the file's notify routine; validate names
// each at its line:col.
func TestUntrustedConfigSendsNoRequests(t *testing.T) {
	other := newLocalUser(t)
	x := newXDGProfile(t, other)
	srv, requests := requestCounter(t)
	writeOwned(t, x.config, fmt.Sprintf(`[[routine]]
name = "beat"
every = "1s"
ping = { url = "%s/ping" }

[[routine]]
name = "page"
every = "1s"
watch = { url = "%s/page" }
%s`, srv.URL, srv.URL, hourly), other.uid, other.gid)
	why := fmt.Sprintf("disabled: %s is owned by %s (uid %d), who can replace %s, so it would let others send requests from your machine and network as you; fix: keep routines.toml in a directory of your own",
		x.configDir, other.name, other.uid, x.config)
	_, stderr, code := x.run(t, "validate")
	for _, want := range []string{x.config + `:1:3: routine "beat" ` + why, x.config + `:6:3: routine "page" ` + why} {
		if code != 78 || !strings.Contains(stderr, want) {
			t.Errorf("validate: exit %d, want 78 and\n%s\nstderr:\n%s", code, want, stderr)
		}
	}
	d := x.start(t, "daemon")
	d.waitStderr("Owning the routines (epoch 1)", ownDeadline)
	time.Sleep(quiet)
	if n := requests.Load(); n > 0 {
		t.Fatalf("another user's file sent %d requests as the owner", n)
	}
	if owning := "Owning the routines (epoch 1): 3 routines from " + x.config + " (2 disabled, see '"; !strings.Contains(d.stderr.String(), owning) {
		t.Errorf("daemon did not say %q", owning)
	}
	// status and routines show them as disabled routines, with the same message.
	for _, cmd := range []string{"status", "routines"} {
		stdout, _, _ := x.run(t, cmd)
		for _, name := range []string{"beat", "page"} {
			if want := fmt.Sprintf("routine %q %s", name, why); !strings.Contains(stdout, want) {
				t.Errorf("%s does not say %s:\n%s", cmd, want, stdout)
			}
		}
	}
	d.stopWith(syscall.SIGTERM)
}

// A token_file outside the directory of routines.toml (here the owner's own credentials file)
// is refused at its line:col with where to put it, by validate and by the daemon (exit 78),
// and never read or sent: the hub it names is not contacted.
func TestHubTokenFileOutsideIsRefused(t *testing.T) {
	nats := newConnCounter(t)
	creds := filepath.Join(t.TempDir(), ".git-credentials")
	if err := os.WriteFile(creds, []byte("https://me:pw@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := newHome(t, fmt.Sprintf("[hub]\nurl = \"nats://%s\"\ntoken_file = %q\n%s", nats.l.Addr(), creds, hourly))
	config := filepath.Join(home, "routines.toml")
	want := fmt.Sprintf(`%s:3:1: token_file %s is outside %s, the directory of routines.toml, the only place a secret file is read from; fix: copy it there (cp %s %s/hub.token; chmod 600 %s/hub.token) and set token_file = "hub.token"`,
		config, creds, home, creds, home, home)
	if _, stderr, code := run(t, home, "validate"); code != 78 || !strings.Contains(stderr, want) {
		t.Errorf("validate: exit %d, want 78 and\n%s\nstderr:\n%s", code, want, stderr)
	}
	d := start(t, home, "daemon")
	code, exited := exitWithin(d, ownDeadline)
	time.Sleep(quiet)
	if n := nats.conns.Load(); n > 0 {
		t.Fatalf("the hub was contacted %d times", n)
	}
	if !exited || code != 78 || !strings.Contains(d.stderr.String(), want) {
		t.Fatalf("daemon: exited %v (code %d), want exit 78 and\n%s\nstderr:\n%s", exited, code, want, d.stderr.String())
	}
}
