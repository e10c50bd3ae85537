package action

import (
	"context"
	"fmt"
	"net/http"
)

// pingAction is `ping = { url, method }`: an HTTP heartbeat to a monitor such as Healthchecks.
type pingAction struct {
	url, method string
	shown       string // url without its password (redact.URL), for messages
	client      *http.Client
	userAgent   string
}

// Run sends the request within in.Timeout and ctx. A 2xx response is OutcomeSuccess; any other
// status, a transport error or a timeout is OutcomeFailed with the status or error as Summary.
func (p *pingAction) Run(ctx context.Context, in Input) Result {
	ctx, cancel := withBudget(ctx, in.Timeout)
	defer cancel()
	resp, err := send(ctx, p.client, p.method, p.url, p.userAgent, nil)
	if err != nil {
		return notSent(err)
	}
	defer drainClose(resp.Body)
	summary := fmt.Sprintf("%s %s: HTTP %s", p.method, p.shown, resp.Status)
	if !statusOK(resp.StatusCode) {
		return failed(summary)
	}
	return Result{Outcome: OutcomeSuccess, Summary: summary, Output: []byte(summary + "\n")}
}
