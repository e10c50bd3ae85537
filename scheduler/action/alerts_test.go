package action

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFiveFailuresThenSuccessNotifyTwice is the alerting scenario with a real ping against a monitor
// that fails five times, then answers 200: exactly one failure and one recovery notification.
func TestFiveFailuresThenSuccessNotifyTwice(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 5 {
			http.Error(w, "nope", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	a, err := New(PingSpec{URL: srv.URL + "/ping"}, Deps{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	alerts := NewAlerts(nil)
	notifier := &recordingNotifier{}
	var outcomes []string
	for range 7 {
		res := a.Run(context.Background(), Input{Routine: "heartbeat", Timeout: 10 * time.Second})
		outcomes = append(outcomes, res.Outcome)
		deliver(t, alerts, notifier, "heartbeat", res)
		if res.Outcome == OutcomeFailed && alerts.ConsecutiveFailures("heartbeat") != len(outcomes) {
			t.Fatalf("ConsecutiveFailures = %d after %d failures", alerts.ConsecutiveFailures("heartbeat"), len(outcomes))
		}
	}
	if strings.Join(outcomes, ",") != "failed,failed,failed,failed,failed,success,success" {
		t.Fatalf("outcomes %v", outcomes)
	}
	sent := notifier.all()
	if len(sent) != 2 {
		t.Fatalf("%d notifications %v, want one failure and one recovery", len(sent), sent)
	}
	if sent[0].title != "heartbeat failed" || !strings.Contains(sent[0].body, "500") {
		t.Errorf("first notification %+v, want the failure with its status", sent[0])
	}
	if sent[1].title != "heartbeat recovered" || !strings.Contains(sent[1].body, "after 5 failed runs") {
		t.Errorf("second notification %+v, want the recovery", sent[1])
	}
	if alerts.ConsecutiveFailures("heartbeat") != 0 {
		t.Error("ConsecutiveFailures not reset by success")
	}
}

func TestAlertsNotifyOn(t *testing.T) {
	t.Parallel()
	ok := Result{Outcome: OutcomeSuccess, Summary: "exit status 0"}
	changed := Result{Outcome: OutcomeChanged, Changed: true, Summary: "+1 −0 lines", Output: []byte("--- previous\n+++ current\n@@ -1 +1,2 @@\n a\n+b\n")}
	fail := Result{Outcome: OutcomeTimeout, Summary: "timed out"}
	tests := []struct {
		name     string
		notifyOn []string
		results  []Result
		want     []string // titles
	}{
		{"default: change and failure episodes", nil, []Result{ok, changed, ok, fail, fail, ok}, []string{"r changed", "r failed", "r recovered"}},
		{"success each time", []string{"success"}, []Result{ok, ok, changed}, []string{"r succeeded", "r succeeded", "r succeeded"}},
		{"change only", []string{"change"}, []Result{ok, fail, changed, ok}, []string{"r changed"}},
		{"failure only", []string{"failure"}, []Result{changed, fail, fail, ok}, []string{"r failed", "r recovered"}},
		{"nothing", []string{}, []Result{fail, ok, changed}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alerts := NewAlerts(tt.notifyOn)
			var got []string
			for _, res := range tt.results {
				if title, _, send := alerts.Observe("r", res); send {
					got = append(got, title)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("notified %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAlertsPerRoutineNotifyOnAndIndependentState(t *testing.T) {
	t.Parallel()
	alerts := NewAlerts(nil)
	alerts.SetNotifyOn("quiet", []string{})
	fail := Result{Outcome: OutcomeFailed}
	if _, _, send := alerts.Observe("quiet", fail); send {
		t.Error("routine with notify_on = [] notified")
	}
	if title, _, send := alerts.Observe("loud", fail); !send || title != "loud failed" {
		t.Error("another routine's first failure was not notified")
	}
	alerts.SetNotifyOn("quiet", nil) // back to the default, state kept: still failing
	if _, _, send := alerts.Observe("quiet", fail); send {
		t.Error("a continuing failure was notified")
	}
}

func TestAlertsSelectorMissingOncePerStreak(t *testing.T) {
	t.Parallel()
	alerts := NewAlerts(nil)
	missing := Result{Outcome: OutcomeSelectorMissing}
	var titles []string
	for _, res := range []Result{missing, missing, missing, missing, missing, {Outcome: OutcomeSuccess}, missing, missing, missing} {
		if title, _, send := alerts.Observe("w", res); send {
			titles = append(titles, title)
		}
	}
	want := []string{"w: selector matches nothing", "w: selector matches again", "w: selector matches nothing"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Fatalf("notified %q, want %q", titles, want)
	}
}

// TestAlertsSeedRestoresState: after a restart the journal's recent outcomes seed the state, so
// a routine that was failing does not re-announce, and one whose selector-missing was reported
// is not reported again.
func TestAlertsSeedRestoresState(t *testing.T) {
	t.Parallel()
	alerts := NewAlerts(nil)
	alerts.Seed("cmd", []string{OutcomeFailed, OutcomeTimeout, "skipped", OutcomeSuccess}) // newest first
	if n := alerts.ConsecutiveFailures("cmd"); n != 2 {
		t.Fatalf("ConsecutiveFailures after seed = %d, want 2", n)
	}
	if _, _, send := alerts.Observe("cmd", Result{Outcome: OutcomeFailed}); send {
		t.Error("seeded failing routine announced a continuing failure")
	}
	if title, body, send := alerts.Observe("cmd", Result{Outcome: OutcomeSuccess}); !send || title != "cmd recovered" || !strings.Contains(body, "after 3 failed runs") {
		t.Errorf("recovery after seed: %q %q %v", title, body, send)
	}

	alerts.Seed("watch", []string{OutcomeSelectorMissing, OutcomeSelectorMissing, OutcomeSelectorMissing, OutcomeChanged})
	if _, _, send := alerts.Observe("watch", Result{Outcome: OutcomeSelectorMissing}); send {
		t.Error("selector-missing re-announced after seed")
	}

	alerts.Seed("fresh", []string{OutcomeSuccess, OutcomeFailed})
	if _, _, send := alerts.Observe("fresh", Result{Outcome: OutcomeFailed}); !send {
		t.Error("first failure after a seeded success was not announced")
	}
}

func TestFailureBodyAddsTheLastOutputLine(t *testing.T) {
	t.Parallel()
	alerts := NewAlerts(nil)
	_, body, _ := alerts.Observe("backup", Result{Outcome: OutcomeFailed, Summary: "exit status 2", Output: []byte("starting\nrsync: connection refused\n\n")})
	if body != "exit status 2\nrsync: connection refused" {
		t.Fatalf("body %q", body)
	}
}
