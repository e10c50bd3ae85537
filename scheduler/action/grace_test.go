package action

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// freeAddr returns a local TCP address where nothing listens (it was just free).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// runGraceful runs a ping to addr wrapped in WithNetworkGrace(grace) on a fake clock in its own
// goroutine, and returns the clock and the channel of its result.
func runGraceful(t *testing.T, addr string, grace time.Duration) (*clockwork.FakeClock, <-chan Result) {
	t.Helper()
	a, err := New(PingSpec{URL: "http://" + addr + "/ping"}, Deps{HTTPClient: &http.Client{Transport: &http.Transport{}}})
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClock()
	out := make(chan Result, 1)
	go func() { out <- WithNetworkGrace(a, grace, clock).Run(context.Background(), Input{Timeout: time.Hour}) }()
	return clock, out
}

// A ping that cannot connect is tried again with a growing wait until a server listens: one
// Result, success, counting every attempt.
func TestNetworkGraceRetriesUntilItConnects(t *testing.T) {
	addr := freeAddr(t)
	clock, out := runGraceful(t, addr, 2*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, wait := range []time.Duration{time.Second, 2 * time.Second} { // attempts 1 and 2 fail
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal("no backoff wait after a refused connection")
		}
		clock.Advance(wait)
	}
	if err := clock.BlockUntilContext(ctx, 1); err != nil { // attempt 3 failed: waiting 4 s
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	clock.Advance(4 * time.Second)
	res := <-out
	if res.Outcome != OutcomeSuccess || res.Attempts != 4 {
		t.Fatalf("result %+v; want success at attempt 4", res)
	}
}

// Without a server for the whole grace the run ends failed, as no connection, with a note;
// an HTTP error is an answer, not a network coming up, and is not tried again.
func TestNetworkGraceEndsAndIgnoresHTTPErrors(t *testing.T) {
	clock, out := runGraceful(t, freeAddr(t), 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, wait := range []time.Duration{time.Second, 2 * time.Second} {
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(wait)
	}
	res := <-out // after 3 s a 4 s wait would end past the 5 s grace
	if res.Outcome != OutcomeFailed || !res.NoConnection || res.Attempts != 3 || !strings.Contains(res.Summary, "network_grace") {
		t.Fatalf("result %+v; want failed, no connection, 3 attempts, a note", res)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer srv.Close()
	_, out = runGraceful(t, strings.TrimPrefix(srv.URL, "http://"), time.Minute)
	if res := <-out; res.Outcome != OutcomeFailed || res.NoConnection || res.Attempts != 1 {
		t.Fatalf("HTTP 502: %+v; want failed once, not as no connection", res)
	}
}
