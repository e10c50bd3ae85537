package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"

	"github.com/routinely/routinely/internal/redact"
)

// maxPage is the most of a page body that watch reads (10 MiB); the rest is ignored.
const maxPage = 10 << 20

// watchAction is `watch = {...}`: fetch a page, extract text, compare with the last snapshot.
type watchAction struct {
	url, method string
	shown       string // url without its password (redact.URL), for messages
	headers     map[string]string
	selector    string // for messages
	matcher     cascadia.Selector
	ignore      []*regexp.Regexp
	store       SnapshotStore
	client      *http.Client
	userAgent   string
}

// newWatch builds a watch from a spec that passed Validate. A missing selector watches <body>.
func newWatch(s WatchSpec, deps Deps) (*watchAction, error) {
	sel := s.Selector
	if sel == "" {
		sel = "body"
	}
	m, err := cascadia.Compile(sel)
	if err != nil { // Validate compiled it already
		return nil, fmt.Errorf("%w: watch: selector: %w", ErrInvalidSpec, err)
	}
	w := &watchAction{
		url: s.URL, shown: redact.URL(s.URL), method: methodOrGet(s.Method), headers: s.Headers, selector: sel, matcher: m,
		store: deps.Snapshots, client: deps.HTTPClient, userAgent: deps.UserAgent,
	}
	for _, pat := range s.Ignore {
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("%w: watch: ignore: %w", ErrInvalidSpec, err)
		}
		w.ignore = append(w.ignore, re)
	}
	return w, nil
}

// Run fetches the page within in.Timeout and ctx and compares its text with the routine's last
// snapshot (in.Routine):
//   - no snapshot yet: saves a baseline, OutcomeSuccess;
//   - same text: OutcomeSuccess, nothing saved;
//   - different text: saves it (SnapshotsKept kept), OutcomeChanged, Changed true, Summary
//     "+A −R lines", Output the unified diff (capped at MaxOutput);
//   - the selector matches nothing: OutcomeSelectorMissing, nothing saved;
//   - transport error, timeout, non-2xx status, unreadable page, snapshot store error:
//     OutcomeFailed with the status or error in Summary and Output.
func (w *watchAction) Run(ctx context.Context, in Input) Result {
	ctx, cancel := withBudget(ctx, in.Timeout)
	defer cancel()
	resp, err := send(ctx, w.client, w.method, w.url, w.userAgent, w.headers)
	if err != nil {
		return notSent(err)
	}
	defer drainClose(resp.Body)
	if !statusOK(resp.StatusCode) {
		return failed(fmt.Sprintf("%s %s: HTTP %s", w.method, w.shown, resp.Status))
	}
	doc, err := goquery.NewDocumentFromReader(io.LimitReader(resp.Body, maxPage))
	if errors.Is(err, context.DeadlineExceeded) {
		return failed(fmt.Sprintf("%s %s: timed out reading the page", w.method, w.shown))
	} else if err != nil {
		return failed(fmt.Sprintf("%s %s: reading the page: %v", w.method, w.shown, err))
	}
	sel := doc.FindMatcher(w.matcher)
	if sel.Length() == 0 {
		msg := fmt.Sprintf("selector %q matched nothing on %s", w.selector, w.shown)
		return Result{Outcome: OutcomeSelectorMissing, Summary: msg, Output: []byte(msg + "\n")}
	}
	return w.compare(in.Routine, normalise(selectionText(sel), w.ignore))
}

// compare checks text against the last snapshot and saves it when it is new.
func (w *watchAction) compare(routine, text string) Result {
	prev, ok, err := w.store.LastSnapshot(routine)
	if err != nil {
		return failed(fmt.Sprintf("reading the last snapshot: %v", err))
	}
	if ok && prev == text {
		return Result{Outcome: OutcomeSuccess, Summary: "unchanged"}
	}
	var unified string
	var added, removed int
	if ok {
		if unified, added, removed, err = diffText(prev, text); err != nil {
			return failed(err.Error())
		}
	}
	if err := w.store.SaveSnapshot(routine, text, SnapshotsKept); err != nil {
		return failed(fmt.Sprintf("saving the snapshot: %v", err))
	}
	if !ok {
		// The baseline text goes to the run's output, so a person can check what the selector
		// and ignore patterns keep.
		return Result{Outcome: OutcomeSuccess, Summary: fmt.Sprintf("baseline saved (%d lines)", len(splitLines(text))),
			Output: capBytes([]byte(text+"\n"), MaxOutput)}
	}
	return Result{
		Outcome: OutcomeChanged,
		Changed: true,
		Summary: changeSummary(added, removed),
		Output:  capBytes([]byte(unified), MaxOutput),
	}
}
