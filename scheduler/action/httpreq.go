package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"time"

	"github.com/routinely/routinely/internal/redact"
)

// Shared by watch and ping: build and send one request inside the run's budget.

// drainLimit is how much of an unwanted body is read so the connection can be reused.
const drainLimit = 64 << 10

// withBudget bounds ctx by timeout when it is positive (Input.Timeout); ctx's own deadline
// still applies if earlier.
func withBudget(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// urlParseError returns what may be shown of err, url.Parse's error for raw: its cause without
// the *url.Error that quotes raw, password and all; ErrURLParse instead when raw has user info
// (redact.URL changes it), since the cause may quote a piece of it.
func urlParseError(err error, raw string) error {
	if redact.URL(raw) != raw {
		return ErrURLParse
	}
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// send performs method url with headers and userAgent (a User-Agent entry in headers wins).
// It returns the response (caller closes the body) or an error describing the failure for a
// history line, naming the URL without its password (redact.URL); a non-2xx status is not an
// error here.
func send(ctx context.Context, client *http.Client, method, url, userAgent string, headers map[string]string) (*http.Response, error) {
	shown := redact.URL(url)
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %w", shown, urlParseError(err, url))
	}
	req.Header.Set("User-Agent", userAgent)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		// client.Do wraps its error in a *url.Error that names the method and URL again
		// (`Get "https://…": dial tcp: …`); the line below names them once, without the
		// password.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s %s: timed out: %w", method, shown, err)
		}
		return nil, fmt.Errorf("%s %s: %w", method, shown, err)
	}
	return resp, nil
}

// drainClose reads a little of body and closes it, so keep-alive connections are reused.
func drainClose(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, drainLimit))
	_ = body.Close()
}

// statusOK reports whether code is 2xx.
func statusOK(code int) bool { return code >= 200 && code <= 299 }

// failed is a Result with OutcomeFailed and summary as its one line and output.
func failed(summary string) Result {
	return Result{Outcome: OutcomeFailed, Summary: summary, Output: []byte(summary + "\n")}
}

// notSent is the failed Result of a request that send could not complete (err), marked
// NoConnection when it never reached the server (noConnection).
func notSent(err error) Result {
	r := failed(err.Error())
	r.NoConnection = noConnection(err)
	return r
}

// noConnection reports whether err means no connection to the server was made: the dial
// failed (refused, no route, network down, connect timeout) or the name did not resolve. An
// error after connecting (a reset, a TLS failure, a read timeout) is the server's answer and
// does not count.
func noConnection(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
