//go:build unix

package e2e

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var devServeRE = regexp.MustCompile(`at http://\S+:(\d+)/`)

// writeFile writes data to path with mode, and returns path.
func writeFile(t *testing.T, path string, data []byte, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// startDevServe starts `routinely dev-serve dir --addr addr` and returns it with the URL to
// reach it on 127.0.0.1.
func startDevServe(t *testing.T, dir, addr string) (*proc, string) {
	t.Helper()
	cmd := exec.Command(bin, "--home", newHome(t, ""), "dev-serve", dir, "--addr", addr)
	cmd.Env = testEnv()
	p := startCmd(t, cmd, "routinely dev-serve")
	p.waitStderr("Ctrl-C to stop", ownDeadline)
	m := devServeRE.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("dev-serve printed no address:\n%s", p.stderr.String())
	}
	return p, "http://127.0.0.1:" + m[1]
}

// `routinely dev-serve DIR` serves DIR's plain files and nothing else: not a symbolic link to a
// file outside it, not a dot file or anything under a dot directory, no listing of a directory
// without index.html (its index.html is served). It warns on --addr 0.0.0.0:…, not on
// 127.0.0.1. (Requests go to 127.0.0.1 only.)
func TestDevServeServesOnlyItsDirectory(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeFile(t, outside, []byte("outside"), 0o644)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "page.html"), []byte("<p>hello</p>"), 0o644)
	writeFile(t, filepath.Join(dir, ".secret"), []byte("dot"), 0o644)
	for _, d := range []string{"empty", "site", ".git"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "empty", "a.txt"), []byte("a"), 0o644)
	writeFile(t, filepath.Join(dir, "site", "index.html"), []byte("<p>index</p>"), 0o644)
	writeFile(t, filepath.Join(dir, ".git", "config"), []byte("[core]"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("page.html", filepath.Join(dir, "inside.html")); err != nil {
		t.Fatal(err)
	}

	p, base := startDevServe(t, dir, "127.0.0.1:0")
	if strings.Contains(p.stderr.String(), "Warning") {
		t.Errorf("dev-serve on 127.0.0.1 warns:\n%s", p.stderr.String())
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, c := range []struct {
		path string
		code int
		body string
	}{
		{"/page.html", 200, "hello"},
		{"/inside.html", 200, "hello"},
		{"/site/", 200, "index"},
		{"/link.txt", 404, ""},
		{"/.secret", 404, ""},
		{"/.git/config", 404, ""},
		{"/empty/", 404, ""},
		{"/", 404, ""},
	} {
		resp, err := client.Get(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(body), c.body) ||
			strings.Contains(string(body), "outside") || strings.Contains(string(body), "a.txt") {
			t.Errorf("GET %s: %d %q, want %d with %q", c.path, resp.StatusCode, body, c.code, c.body)
		}
	}
	p.signal(syscall.SIGTERM)
	p.wait(cmdTimeout)

	open, base := startDevServe(t, dir, "0.0.0.0:0")
	if !strings.Contains(open.stderr.String(), "Warning: dev-serve listens on") {
		t.Errorf("dev-serve on 0.0.0.0 does not warn:\n%s", open.stderr.String())
	}
	resp, err := client.Get(base + "/page.html")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("dev-serve on 0.0.0.0: GET /page.html: %d", resp.StatusCode)
	}
	open.signal(syscall.SIGTERM)
	open.wait(cmdTimeout)
}
