package ui

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
)

func TestTakeoverPromptMarkup(t *testing.T) {
	test.NewTempApp(t)
	p := NewTakeoverPrompt(fixtureRequest(), &recorder{}, nil)
	p.Tick(fixtureNow.Add(17 * time.Second))
	assertMarkup(t, "takeover_prompt.xml", p.Content(), fyne.NewSize(520, 330))
	if !strings.Contains(p.countdown.Text, "43s") {
		t.Errorf("countdown = %q, want 43s left", p.countdown.Text)
	}
	p.Tick(fixtureNow.Add(61 * time.Second))
	if !strings.Contains(p.countdown.Text, "denied") {
		t.Errorf("after the deadline countdown = %q, want it to say denied", p.countdown.Text)
	}
}

// ownedDir acquires a real ownership handle (PolicyAsk) on a fresh state directory, starts a
// real challenger process and returns the handle and the request it sent.
func ownedDir(t *testing.T) (<-chan ownership.Reply, *ownership.Handle, ownership.Request, *challenger) {
	t.Helper()
	dir, err := ownership.StateDir(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	requests := make(chan ownership.Request, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	h, err := ownership.Acquire(ctx, ownership.Options{
		Dir: dir, Role: ownership.RoleDesktop, Version: "test", Policy: ownership.PolicyAsk,
		HeartbeatInterval: 100 * time.Millisecond,
		OnRequest:         func(r ownership.Request) { requests <- r },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Release(context.Background()) })
	replies := make(chan ownership.Reply, 4)
	go func() {
		for ev := range h.Events() {
			if ev.Kind == ownership.EventTakeoverResolved && ev.Reply != nil {
				replies <- *ev.Reply
			}
		}
	}()
	c := startChallenger(t, dir)
	select {
	case req := <-requests:
		return replies, h, req, c
	case <-time.After(20 * time.Second):
		t.Fatal("the owner never saw the challenger's takeover request")
	}
	return nil, nil, ownership.Request{}, nil
}

// handleActions routes the prompt's decision to the real ownership handle.
type handleActions struct {
	recorder
	h *ownership.Handle
}

func (a *handleActions) Decide(id string, approve bool) error { return a.h.Decide(id, approve) }

// resolved returns the reply the handle reported for its request.
func resolved(t *testing.T, replies <-chan ownership.Reply) ownership.Reply {
	t.Helper()
	select {
	case r := <-replies:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the handle reported no answer to the request")
	}
	return ownership.Reply{}
}

func TestTakeoverApproveReachesHandle(t *testing.T) {
	a := test.NewTempApp(t)
	replies, h, req, c := ownedDir(t)
	p := newPresenters(a, &handleActions{h: h})
	var opened []string
	p.Tray.OnRequest = func(r ownership.Request) { opened = append(opened, r.ID) }
	st := session.State{Mode: session.ModeOwning, Now: time.Now(), Pending: &req}

	test.AssertNotificationSent(t, TakeoverAlert(req).Notification(), func() { p.Apply(st) })
	if p.Prompt == nil {
		t.Fatal("no takeover dialog after the request")
	}
	if p.Tray.Look != LookWarning || p.host.icon != LookWarning.Resource() {
		t.Errorf("tray look = %s (icon shown %v), want warning while a request is pending", p.Tray.Look, p.host.icon)
	}
	if it := p.Tray.Menu.Item(approvePrefix); it == nil || !strings.Contains(it.Label, "pid "+strconv.Itoa(req.Requester.PID)) {
		t.Errorf("tray has no Approve item naming pid %d: %q", req.Requester.PID, p.Tray.Menu.Labels())
	}
	// The same request again (the next second's snapshot): no second notification, no second
	// call to open the window.
	st.Now = st.Now.Add(time.Second)
	test.AssertNotificationSent(t, nil, func() { p.Apply(st) })
	if len(opened) != 1 || opened[0] != req.ID {
		t.Errorf("OnRequest calls = %q, want once for %s", opened, req.ID)
	}
	test.Tap(p.Prompt.approve)

	select {
	case <-h.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("approving did not make the handle yield")
	}
	if got := c.Result(t, 10*time.Second); !strings.HasPrefix(got, "owned") {
		t.Fatalf("challenger: %q, want it to own after approval", got)
	}
	if r := resolved(t, replies); r.RequestID != req.ID || r.Decision != ownership.DecisionApproved || r.By != "user" {
		t.Errorf("reply = %+v, want approved by user for %s", r, req.ID)
	}
}

func TestTakeoverDenyReachesHandle(t *testing.T) {
	a := test.NewTempApp(t)
	replies, h, req, c := ownedDir(t)
	p := newPresenters(a, &handleActions{h: h})
	p.Apply(session.State{Mode: session.ModeOwning, Now: time.Now(), Pending: &req})
	if p.Prompt == nil {
		t.Fatal("no takeover dialog after the request")
	}

	test.Tap(p.Prompt.deny)

	if got := c.Result(t, 10*time.Second); got != "denied" {
		t.Fatalf("challenger: %q, want denied", got)
	}
	if !h.Admitting() {
		t.Error("the owner stopped admitting runs after a denial")
	}
	if r := resolved(t, replies); r.Decision != ownership.DecisionDenied || r.By != "user" {
		t.Errorf("reply = %+v, want denied by user", r)
	}
	// The request is gone: the prompt closes and the tray items disappear.
	p.Apply(session.State{Mode: session.ModeOwning, Now: time.Now()})
	if p.Prompt != nil || p.Tray.Menu.Item(LabelDeny) != nil || p.Tray.Menu.Item(approvePrefix) != nil {
		t.Errorf("prompt or tray items left after the answer: %q", p.Tray.Menu.Labels())
	}
}

func TestTakeoverApproveFromTrayReachesHandle(t *testing.T) {
	a := test.NewTempApp(t)
	replies, h, req, c := ownedDir(t)
	p := newPresenters(a, &handleActions{h: h})
	p.Apply(session.State{Mode: session.ModeOwning, Now: time.Now(), Pending: &req})

	approve := p.Tray.Menu.Item(approvePrefix)
	if approve == nil || p.Tray.Menu.Item(LabelDeny) == nil {
		t.Fatalf("no Approve/Deny items in the tray: %q", p.Tray.Menu.Labels())
	}
	approve.Action()

	if got := c.Result(t, 10*time.Second); !strings.HasPrefix(got, "owned") {
		t.Fatalf("challenger: %q, want it to own after approval", got)
	}
	if r := resolved(t, replies); r.Decision != ownership.DecisionApproved || r.By != "user" {
		t.Errorf("reply = %+v, want approved by user", r)
	}
	select {
	case <-h.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("the handle still owns after the approval")
	}
}
