//go:build unix || windows

package e2e

import (
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	_ "modernc.org/sqlite" // the journal's driver: journal_test.go, which also imports it, is Unix's only
)

// The password of a ping or watch URL (http://admin:PASSWORD@…) goes to the server and nowhere
// else: not the daemon's log, not `run`, `history` (table, --json, --output), `status`,
// `routines`, nor the runs the journal keeps — for a request that worked and for one that
// could not connect. The URL is still named, without its password.
func TestURLPasswordsAreNeverShown(t *testing.T) {
	const password = "s3cretPW"
	var mu sync.Mutex
	var creds []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		mu.Lock()
		creds = append(creds, user+":"+pass)
		mu.Unlock()
		fmt.Fprintln(w, "<html><body><p>all good</p></body></html>")
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there any more: the request cannot connect

	reachable := "http://admin:" + password + "@" + strings.TrimPrefix(srv.URL, "http://") + "/check"
	refused := "http://admin:" + password + "@" + closed + "/check"
	var config strings.Builder
	for _, r := range []struct{ name, action, url string }{
		{"ok-ping", "ping", reachable}, {"bad-ping", "ping", refused},
		{"ok-watch", "watch", reachable}, {"bad-watch", "watch", refused},
	} {
		fmt.Fprintf(&config, "[[routine]]\nname = %q\nevery = \"1h\"\ncatch_up = \"skip\"\nnetwork_grace = \"0s\"\n"+
			"notify_on = [\"success\", \"failure\"]\n%s = { url = %q }\n\n", r.name, r.action, r.url)
	}
	home := newHome(t, config.String())
	d := start(t, home, "daemon", "--log-level", "debug")
	waitOwner(t, home, d.pid())

	var shown strings.Builder // everything the commands printed
	show := func(args ...string) {
		stdout, stderr, code := run(t, home, args...)
		fmt.Fprintf(&shown, "$ routinely %s (exit %d)\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	for _, name := range []string{"ok-ping", "bad-ping", "ok-watch", "bad-watch"} {
		show("run", name)
		show("run", name, "--json")
	}
	show("history")
	show("history", "--json")
	show("status")
	show("status", "--json")
	show("routines")
	ids := runIDs(t, home)
	for _, id := range ids {
		show("history", "--output", id)
		show("history", "--output", id, "--raw")
	}
	d.stopWith(syscall.SIGTERM)

	if strings.Contains(shown.String(), password) {
		t.Errorf("the password is in what the commands printed:\n%s", shown.String())
	}
	if log := d.stdout.String() + d.stderr.String(); strings.Contains(log, password) {
		t.Errorf("the password is in the daemon's log:\n%s", log)
	}
	for _, want := range []string{"admin:xxxxx@" + closed, "connection refused"} {
		if !strings.Contains(strings.ToLower(shown.String()), want) { // Windows: "Connection refused."
			t.Errorf("the failed request's record does not say %q:\n%s", want, shown.String())
		}
	}
	kept := journalRunTexts(t, home)
	if len(ids) != 8 || strings.Contains(kept, password) {
		t.Errorf("%d runs in the journal, want 8, without the password:\n%s", len(ids), kept)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(creds) != 4 {
		t.Fatalf("the server got %d requests, want 4 (2 pings, 2 watches)", len(creds))
	}
	for _, c := range creds {
		if c != "admin:"+password {
			t.Fatalf("the server got basic auth %q, want the URL's user and password", c)
		}
	}
}

// runIDs returns the ids of every run in the journal.
func runIDs(t *testing.T, home string) []string {
	t.Helper()
	db := openJournalDB(t, home)
	rows, err := db.Query(`SELECT id FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// journalRunTexts is every text the journal keeps of its runs: reason, summary, output.
func journalRunTexts(t *testing.T, home string) string {
	t.Helper()
	db := openJournalDB(t, home)
	rows, err := db.Query(`SELECT routine, outcome, reason, summary, COALESCE(output, '') FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var routine, outcome, reason, summary string
		var output []byte
		if err := rows.Scan(&routine, &outcome, &reason, &summary, &output); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s (%s): %s\n%s\n", routine, outcome, reason, summary, output)
	}
	return b.String()
}

func openJournalDB(t *testing.T, home string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(home, "journal.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
