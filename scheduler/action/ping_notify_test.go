package action

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPingSendsMethodAndUserAgent(t *testing.T) {
	t.Parallel()
	var method, agent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, agent = r.Method, r.UserAgent()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	a, err := New(PingSpec{URL: srv.URL, Method: "head"}, Deps{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Run(context.Background(), Input{Timeout: 10 * time.Second})
	if res.Outcome != OutcomeSuccess || !strings.Contains(res.Summary, "204") {
		t.Fatalf("got %q %q, want success with 204", res.Outcome, res.Summary)
	}
	if method != "HEAD" || agent != UserAgent("dev") {
		t.Fatalf("server saw %s with User-Agent %q", method, agent)
	}
}

func TestPingNon2xxIsFailed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound) // followed to a 404
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	a, _ := New(PingSpec{URL: srv.URL + "/ping"}, Deps{HTTPClient: srv.Client()})
	if res := a.Run(context.Background(), Input{Timeout: 10 * time.Second}); res.Outcome != OutcomeFailed || !strings.Contains(res.Summary, "404") {
		t.Fatalf("got %q %q, want failed naming the final 404", res.Outcome, res.Summary)
	}
}

// A transport error names the method and the URL once, then the cause: the line a failure
// notification shows (Go's client error alone would repeat them as `Get "URL": …`).
func TestPingTransportErrorNamesTheURLOnce(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/ping"
	srv.Close() // nothing listens there now: connection refused
	a, _ := New(PingSpec{URL: url}, Deps{HTTPClient: &http.Client{}})
	res := a.Run(context.Background(), Input{Timeout: 10 * time.Second})
	if res.Outcome != OutcomeFailed || strings.Count(res.Summary, url) != 1 ||
		!strings.HasPrefix(res.Summary, "GET "+url+": ") || !strings.Contains(strings.ToLower(res.Summary), "refused") ||
		strings.Contains(res.Summary, "\n") {
		t.Fatalf("got %q %q, want failed with one line: GET URL: … connection refused", res.Outcome, res.Summary)
	}
}

func TestNotifyShowsTitleAndBody(t *testing.T) {
	t.Parallel()
	n := &recordingNotifier{}
	a, err := New(&NotifySpec{Title: "Good morning", Body: "Stand-up at 9:30"}, Deps{Notifier: n})
	if err != nil {
		t.Fatal(err)
	}
	if res := a.Run(context.Background(), Input{}); res.Outcome != OutcomeSuccess {
		t.Fatalf("outcome %q", res.Outcome)
	}
	if got := n.all(); len(got) != 1 || got[0] != (notification{"Good morning", "Stand-up at 9:30"}) {
		t.Fatalf("notifier got %v", got)
	}
}

func TestNotifyErrorIsFailed(t *testing.T) {
	t.Parallel()
	a, _ := New(NotifySpec{Title: "t"}, Deps{Notifier: &recordingNotifier{err: errors.New("no notification daemon")}})
	if res := a.Run(context.Background(), Input{}); res.Outcome != OutcomeFailed || !strings.Contains(res.Summary, "no notification daemon") {
		t.Fatalf("got %q %q", res.Outcome, res.Summary)
	}
}

func TestCappedBufferKeepsWithinTheLimit(t *testing.T) {
	t.Parallel()
	c := newCappedBuffer(100)
	_, _ = c.Write([]byte(strings.Repeat("x", 60)))
	if got := c.Bytes(); len(got) != 60 {
		t.Fatalf("under the limit: %d bytes, want all 60", len(got))
	}
	_, _ = c.Write([]byte(strings.Repeat("y", 60)))
	got := string(c.Bytes())
	if len(got) > 100 || !strings.HasSuffix(got, "bytes not kept]\n") {
		t.Fatalf("over the limit: %d bytes %q", len(got), got)
	}
	kept := strings.Index(got, "\n[output truncated")
	if !strings.Contains(got, "truncated: "+strconv.Itoa(120-kept)+" bytes") {
		t.Fatalf("note does not count the %d dropped bytes: %q", 120-kept, got)
	}
}
