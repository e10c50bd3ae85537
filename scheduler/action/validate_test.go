package action

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateRejectsBadInputWithItsKey(t *testing.T) {
	okWatch := WatchSpec{URL: "https://example.com/page", Selector: "#news"}
	tests := []struct {
		name    string
		errs    []FieldError
		wantKey string
		wantMsg string
	}{
		{"run empty argv", RunSpec{}.Validate(), "", "at least the program"},
		{"run empty program", RunSpec{Argv: []string{" ", "x"}}.Validate(), "", "program"},
		{"run NUL", RunSpec{Argv: []string{"echo", "a\x00b"}}.Validate(), "", "NUL"},
		{"shell blank", ShellSpec{Script: " \n"}.Validate(), "", "empty"},
		{"watch ftp url", WatchSpec{URL: "ftp://example.com/x"}.Validate(), "url", "http:// or https://"},
		{"watch relative url", WatchSpec{URL: "/just/a/path"}.Validate(), "url", "http:// or https://"},
		{"watch no host", WatchSpec{URL: "http:///path"}.Validate(), "url", "no host"},
		{"watch empty url", WatchSpec{}.Validate(), "url", "empty"},
		{"watch empty selector key", WatchSpec{URL: okWatch.URL, SelectorSet: true}.Validate(), "selector", "empty"},
		{"watch blank selector", WatchSpec{URL: okWatch.URL, Selector: "  "}.Validate(), "selector", "empty"},
		{"watch bad selector", WatchSpec{URL: okWatch.URL, Selector: "div[["}.Validate(), "selector", "not valid CSS"},
		{"watch bad ignore", WatchSpec{URL: okWatch.URL, Ignore: []string{"ok", "(unclosed"}}.Validate(), "ignore", "ignore[1]"},
		{"watch bad method", WatchSpec{URL: okWatch.URL, Method: "DELETE"}.Validate(), "method", "DELETE"},
		{"watch HEAD has no body", WatchSpec{URL: okWatch.URL, Method: "HEAD"}.Validate(), "method", "HEAD"},
		{"watch header newline", WatchSpec{URL: okWatch.URL, Headers: map[string]string{"X-Name": "a\r\nInjected: 1"}}.Validate(), "headers.X-Name", "newline"},
		{"watch header bad name", WatchSpec{URL: okWatch.URL, Headers: map[string]string{"Bad Name": "v"}}.Validate(), "headers.Bad Name", "token"},
		{"notify blank title", NotifySpec{Body: "b"}.Validate(), "title", "empty"},
		{"ping javascript url", PingSpec{URL: "javascript:alert(1)"}.Validate(), "url", "http:// or https://"},
		{"ping bad method", PingSpec{URL: "https://hc.example/ping", Method: "BREW"}.Validate(), "method", "BREW"},
		{"notify_on unknown", ValidateNotifyOn([]string{"failure", "always"}), "notify_on", "always"},
		{"notify_on twice", ValidateNotifyOn([]string{"change", "change"}), "notify_on", "twice"},
		{"retries too many", ValidateRetries(6), "retries", "between 0 and 5"},
		{"retries negative", ValidateRetries(-1), "retries", "between 0 and 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.errs) != 1 {
				t.Fatalf("got %d findings %v, want 1", len(tt.errs), tt.errs)
			}
			if tt.errs[0].Key != tt.wantKey || !strings.Contains(tt.errs[0].Message, tt.wantMsg) {
				t.Fatalf("got %+v, want key %q and message containing %q", tt.errs[0], tt.wantKey, tt.wantMsg)
			}
		})
	}
}

func TestValidateAcceptsGoodSpecs(t *testing.T) {
	specs := map[string][]FieldError{
		"run":               RunSpec{Argv: []string{"echo", "hi"}}.Validate(),
		"shell":             ShellSpec{Script: "echo hi"}.Validate(),
		"watch full":        WatchSpec{URL: "https://example.com", Selector: "main > ul li.item", SelectorSet: true, Ignore: []string{`^Updated \d+`}, Method: "post", Headers: map[string]string{"X-Token": "abc", "User-Agent": "me"}}.Validate(),
		"watch whole page":  WatchSpec{URL: "http://localhost:8080/status"}.Validate(),
		"notify":            NotifySpec{Title: "Morning", Body: ""}.Validate(),
		"ping":              PingSpec{URL: "https://hc-ping.com/uuid", Method: "head"}.Validate(),
		"notify_on":         ValidateNotifyOn([]string{"success", "failure", "change"}),
		"retries":           ValidateRetries(5),
		"notify_on default": ValidateNotifyOn(nil),
	}
	for name, errs := range specs {
		if len(errs) != 0 {
			t.Errorf("%s: unexpected findings %v", name, errs)
		}
	}
}

func TestNewRejectsWhatValidateRejects(t *testing.T) {
	deps := Deps{Notifier: &recordingNotifier{}, Snapshots: newMemSnapshots()}
	_, err := New(WatchSpec{URL: "file:///etc/passwd", Selector: "p"}, deps)
	if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "url:") {
		t.Fatalf("New(bad watch) = %v, want ErrInvalidSpec naming url", err)
	}
	var fe FieldError
	if !errors.As(err, &fe) || fe.Key != "url" {
		t.Fatalf("errors.As FieldError = %+v, want key url", fe)
	}
	if _, err := New(42, deps); !errors.Is(err, ErrUnknownSpec) {
		t.Fatalf("New(42) = %v, want ErrUnknownSpec", err)
	}
	if _, err := New((*RunSpec)(nil), deps); !errors.Is(err, ErrUnknownSpec) {
		t.Fatalf("New(nil *RunSpec) = %v, want ErrUnknownSpec", err)
	}
	if _, err := New(WatchSpec{URL: "https://example.com"}, Deps{}); !errors.Is(err, ErrMissingDep) {
		t.Fatalf("New(watch, no store) = %v, want ErrMissingDep", err)
	}
	if _, err := New(NotifySpec{Title: "t"}, Deps{}); !errors.Is(err, ErrMissingDep) {
		t.Fatalf("New(notify, no notifier) = %v, want ErrMissingDep", err)
	}
	for _, spec := range []any{&RunSpec{Argv: []string{"true"}}, &ShellSpec{Script: "true"}, &WatchSpec{URL: "https://e.com"}, &NotifySpec{Title: "t"}, &PingSpec{URL: "https://e.com"}} {
		if a, err := New(spec, deps); err != nil || a == nil {
			t.Errorf("New(%T) = %v, %v; want an action", spec, a, err)
		}
	}
}
