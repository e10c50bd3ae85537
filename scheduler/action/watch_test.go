package action

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pageServer serves the pages in order, one per request, repeating the last; it records the
// requests' method, User-Agent and X-Token header.
type pageServer struct {
	*httptest.Server
	mu      sync.Mutex
	pages   []string
	served  int
	methods []string
	agents  []string
	tokens  []string
}

func newPageServer(t *testing.T, pages ...string) *pageServer {
	t.Helper()
	ps := &pageServer{pages: pages}
	ps.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		page := ps.pages[min(ps.served, len(ps.pages)-1)]
		ps.served++
		ps.methods = append(ps.methods, r.Method)
		ps.agents = append(ps.agents, r.UserAgent())
		ps.tokens = append(ps.tokens, r.Header.Get("X-Token"))
		ps.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(ps.Close)
	return ps
}

// newsPage is a page whose #news list holds items, next to a clock that changes every time
// (dropped by the routine's ignore pattern) and content outside the selector.
func newsPage(fetch int, items ...string) string {
	var b strings.Builder
	b.WriteString(`<html><head><title>News</title><style>li{color:red}</style></head><body><h1>Site header</h1><ul id="news">`)
	fmt.Fprintf(&b, "<li>Updated at 10:%02d</li>", fetch)
	for _, it := range items {
		fmt.Fprintf(&b, "<li>\n   %s \t </li>", it)
	}
	b.WriteString(`</ul><footer>© somebody</footer></body></html>`)
	return b.String()
}

const removedPage = `<html><body><h1>Site header</h1><div id="other"><p>New layout</p></div></body></html>`

// TestWatchIssueScenario is the page-watch scenario: v1 → v2 → v2 → selector removed ×3 gives exactly one
// change notification with the right lines, none for the unchanged fetch and one
// selector-missing alert.
func TestWatchIssueScenario(t *testing.T) {
	t.Parallel()
	srv := newPageServer(t,
		newsPage(1, "Alpha", "Beta", "Gamma"),
		newsPage(2, "Alpha", "Gamma", "Delta", "Epsilon"),
		newsPage(3, "Alpha", "Gamma", "Delta", "Epsilon"),
		removedPage, removedPage, removedPage,
	)
	store := newMemSnapshots()
	notifier := &recordingNotifier{}
	alerts := NewAlerts(nil)
	a, err := New(WatchSpec{URL: srv.URL + "/news", Selector: "#news", Ignore: []string{`^Updated at \d+:\d+$`}},
		Deps{Snapshots: store, HTTPClient: srv.Client(), UserAgent: UserAgent("1.2.3")})
	if err != nil {
		t.Fatal(err)
	}

	wantOutcomes := []string{OutcomeSuccess, OutcomeChanged, OutcomeSuccess, OutcomeSelectorMissing, OutcomeSelectorMissing, OutcomeSelectorMissing}
	wantSent := []int{0, 1, 1, 1, 1, 2} // notifications shown so far after each run
	var changeRes Result
	for i, want := range wantOutcomes {
		res := a.Run(context.Background(), Input{Routine: "news", Timeout: 10 * time.Second})
		if res.Outcome != want {
			t.Fatalf("run %d: outcome %q (%s), want %q", i+1, res.Outcome, res.Summary, want)
		}
		if res.Outcome == OutcomeChanged {
			changeRes = res
		}
		deliver(t, alerts, notifier, "news", res)
		if got := len(notifier.all()); got != wantSent[i] {
			t.Fatalf("after run %d: %d notifications %v, want %d", i+1, got, notifier.all(), wantSent[i])
		}
	}

	if !changeRes.Changed || changeRes.Summary != "+2 −1 lines" {
		t.Errorf("change result Changed=%v Summary=%q, want true and %q", changeRes.Changed, changeRes.Summary, "+2 −1 lines")
	}
	diff := string(changeRes.Output)
	for _, want := range []string{"--- previous", "+++ current", "-Beta\n", "+Delta\n", "+Epsilon\n", " Alpha\n"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "Updated at") || strings.Contains(diff, "Site header") {
		t.Errorf("diff holds ignored or unselected text:\n%s", diff)
	}

	sent := notifier.all()
	change, missing := sent[0], sent[1]
	if change.title != "news changed" {
		t.Errorf("change title %q", change.title)
	}
	for _, want := range []string{"+2 −1 lines", "+ Delta", "+ Epsilon", "− Beta"} {
		if !strings.Contains(change.body, want) {
			t.Errorf("change body lacks %q:\n%s", want, change.body)
		}
	}
	if strings.Contains(change.body, "Alpha") {
		t.Errorf("change body lists an unchanged line:\n%s", change.body)
	}
	if !strings.Contains(missing.title, "selector matches nothing") {
		t.Errorf("second notification %q is not the selector-missing alert", missing.title)
	}

	if n := store.count("news"); n != 2 || store.lastKeep != SnapshotsKept {
		t.Errorf("store holds %d snapshots (keep %d), want baseline + change with keep %d", n, store.lastKeep, SnapshotsKept)
	}
	for _, ua := range srv.agents {
		if ua != "Routinely/1.2.3 (+local routine runner)" {
			t.Errorf("User-Agent %q", ua)
		}
	}
}

func TestWatchBaselineTextIsNormalised(t *testing.T) {
	t.Parallel()
	srv := newPageServer(t, `<html><body><main><p>  Price:&nbsp;<b>12</b>
	 EUR </p><script>var x = 1;</script><p>Stock: low<br>Ships  in 2   days</p><!-- note --></main></body></html>`)
	store := newMemSnapshots()
	a, err := New(WatchSpec{URL: srv.URL, Selector: "main", Method: "post", Headers: map[string]string{"X-Token": "s3cret"}},
		Deps{Snapshots: store, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Run(context.Background(), Input{Routine: "price", Timeout: 10 * time.Second})
	if res.Outcome != OutcomeSuccess || res.Changed {
		t.Fatalf("first fetch: %+v, want a success baseline", res)
	}
	got, _, _ := store.LastSnapshot("price")
	if want := "Price: 12 EUR\nStock: low\nShips in 2 days"; got != want || string(res.Output) != want+"\n" {
		t.Fatalf("snapshot %q, output %q, want %q in both", got, res.Output, want)
	}
	if srv.methods[0] != "POST" || srv.tokens[0] != "s3cret" {
		t.Fatalf("request method %q token %q, want POST with the configured header", srv.methods[0], srv.tokens[0])
	}
}

func TestWatchWithoutSelectorWatchesTheBody(t *testing.T) {
	t.Parallel()
	srv := newPageServer(t, `<html><head><title>T</title></head><body><p>one</p><p>two</p></body></html>`)
	store := newMemSnapshots()
	a, err := New(WatchSpec{URL: srv.URL}, Deps{Snapshots: store, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	a.Run(context.Background(), Input{Routine: "page", Timeout: 10 * time.Second})
	if got, _, _ := store.LastSnapshot("page"); got != "one\ntwo" {
		t.Fatalf("snapshot %q, want the body's text", got)
	}
}

// Source line breaks are only whitespace, except inside <pre>, where each one starts a line.
func TestWatchKeepsLineBreaksOnlyInsidePre(t *testing.T) {
	t.Parallel()
	srv := newPageServer(t, "<html><body><pre>total: 3\n  <b>failed:</b> 1</pre><p>all\nfine</p></body></html>")
	store := newMemSnapshots()
	a, err := New(WatchSpec{URL: srv.URL}, Deps{Snapshots: store, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	a.Run(context.Background(), Input{Routine: "pre", Timeout: 10 * time.Second})
	got, _, _ := store.LastSnapshot("pre")
	if want := "total: 3\nfailed: 1\nall fine"; got != want {
		t.Fatalf("snapshot %q, want %q", got, want)
	}
}

func TestWatchHTTPErrorsAreFailedWithTheStatus(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	store := newMemSnapshots()
	a, _ := New(WatchSpec{URL: srv.URL, Selector: "p"}, Deps{Snapshots: store, HTTPClient: srv.Client()})
	res := a.Run(context.Background(), Input{Routine: "w", Timeout: 10 * time.Second})
	if res.Outcome != OutcomeFailed || !strings.Contains(res.Summary, "503") {
		t.Fatalf("got %q %q, want failed naming 503", res.Outcome, res.Summary)
	}
	if store.count("w") != 0 {
		t.Fatal("a failed fetch saved a snapshot")
	}
}

func TestWatchTimeoutIsFailed(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-r.Context().Done() // never answers; returns when the client gives up
	}))
	defer srv.Close()
	a, _ := New(WatchSpec{URL: srv.URL, Selector: "p"}, Deps{Snapshots: newMemSnapshots(), HTTPClient: srv.Client()})
	start := time.Now()
	res := a.Run(context.Background(), Input{Routine: "slow", Timeout: 300 * time.Millisecond})
	if res.Outcome != OutcomeFailed || !strings.Contains(res.Summary, "timed out") {
		t.Fatalf("got %q %q, want failed, timed out", res.Outcome, res.Summary)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second || hits.Load() != 1 {
		t.Fatalf("took %v with %d requests: the timeout was not applied", elapsed, hits.Load())
	}
}

func TestWatchConnectionRefusedIsFailed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	a, _ := New(WatchSpec{URL: url}, Deps{Snapshots: newMemSnapshots(), HTTPClient: &http.Client{}})
	if res := a.Run(context.Background(), Input{Timeout: 5 * time.Second}); res.Outcome != OutcomeFailed || !strings.Contains(res.Summary, url) {
		t.Fatalf("got %q %q, want failed naming the URL", res.Outcome, res.Summary)
	}
}

func TestWatchSnapshotStoreErrorIsFailed(t *testing.T) {
	t.Parallel()
	srv := newPageServer(t, `<p>x</p>`)
	store := newMemSnapshots()
	store.err = errors.New("disk on fire")
	a, _ := New(WatchSpec{URL: srv.URL, Selector: "p"}, Deps{Snapshots: store, HTTPClient: srv.Client()})
	if res := a.Run(context.Background(), Input{Timeout: 5 * time.Second}); res.Outcome != OutcomeFailed || !strings.Contains(res.Summary, "disk on fire") {
		t.Fatalf("got %q %q, want failed with the store's error", res.Outcome, res.Summary)
	}
}

func TestChangeBodyShowsAFewLinesEach(t *testing.T) {
	t.Parallel()
	prev := "a\nb\nc\nd\ne"
	cur := "a\n-- not a header\n1\n2\n3\n4\ne"
	unified, added, removed, err := diffText(prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	if added != 5 || removed != 3 {
		t.Fatalf("added %d removed %d, want 5 and 3", added, removed)
	}
	body := changeBody(Result{Summary: changeSummary(added, removed), Output: []byte(unified)}, 3)
	want := "+5 −3 lines\n+ -- not a header\n+ 1\n+ 2\n+ … and 2 more\n− b\n− c\n− d"
	if body != want {
		t.Fatalf("body\n%s\nwant\n%s", body, want)
	}
}

func TestWatchSlowBodyTimesOut(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body><p>first part")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	defer srv.Close()
	a, _ := New(WatchSpec{URL: srv.URL, Selector: "p"}, Deps{Snapshots: newMemSnapshots(), HTTPClient: srv.Client()})
	res := a.Run(context.Background(), Input{Timeout: 300 * time.Millisecond})
	if res.Outcome != OutcomeFailed || !strings.Contains(res.Summary, "timed out reading the page") {
		t.Fatalf("got %q %q, want failed, timed out reading", res.Outcome, res.Summary)
	}
}
