package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// pipePair connects a Client to Serve over two real pipes (what a window process has), and
// returns the client and a channel closed once Serve has returned.
func pipePair(t *testing.T, acts Actions, feed *Feed) (*Client, <-chan struct{}) {
	t.Helper()
	toParentR, toParentW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toChildR, toChildW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); Serve(NewConn(toParentR, toChildW), acts, feed) }()
	c := NewClient(NewConn(toChildR, toParentW), nil)
	t.Cleanup(func() {
		_ = c.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return within 10 s of the client closing")
		}
	})
	return c, served
}

// fill sets every exported field reachable from v to a non-zero value (slices and maps get one
// element) and fails for a field the gob encoding cannot carry (func, chan, interface): what
// the window shows must cross to its process whole.
func fill(t *testing.T, v reflect.Value, path string, depth int) {
	t.Helper()
	if depth > 12 {
		t.Fatalf("%s: nested too deep (a cycle?)", path)
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC).Add(time.Duration(depth) * time.Hour)))
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() {
				fill(t, v.Field(i), path+"."+f.Name, depth+1)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), path, depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0), path+"[0]", depth+1)
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k, path+"[key]", depth+1)
		fill(t, e, path+"[value]", depth+1)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString("text of " + path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(7 + depth))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(9 + depth))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	default:
		t.Errorf("%s is a %s: it cannot cross to the window process (gob)", path, v.Kind())
	}
}

// TestTheWholeStateCrosses: every exported field of session.State, as deep as it goes, reaches
// the window process unchanged, so a field added to the state needs no work in the bridge.
func TestTheWholeStateCrosses(t *testing.T) {
	var st session.State
	fill(t, reflect.ValueOf(&st).Elem(), "State", 0)
	if st.Pending == nil || len(st.Routines) != 1 || st.Routines[0].Last == nil || st.Owner.Record.LastJob == nil {
		t.Fatalf("fill left parts of the state empty: %+v", st)
	}
	feed := NewFeed()
	feed.Publish(st)
	c, _ := pipePair(t, &recorder{}, feed)
	u, err := c.Next(Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(u.State, st) {
		t.Errorf("the state changed on its way:\n got %+v\nwant %+v", u.State, st)
	}
}

// call is one action the recorder received.
type call struct {
	method string
	args   []any
}

// recorder is the parent's Actions in these tests: it records each call and fails those whose
// first argument is "fail".
type recorder struct {
	mu    sync.Mutex
	calls []call
}

func (r *recorder) add(method string, args ...any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{method, args})
	if len(args) > 0 && args[0] == "fail" {
		return fmt.Errorf("%s refused: %w", method, ownership.ErrNoRequest)
	}
	return nil
}

func (r *recorder) last() call {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		return call{}
	}
	return r.calls[len(r.calls)-1]
}

func (r *recorder) waitFor(t *testing.T, method string, args ...any) {
	t.Helper()
	want := call{method, args}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, c := range r.calls {
			if reflect.DeepEqual(c, want) {
				r.mu.Unlock()
				return
			}
		}
		r.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the app never received %v; calls: %v", want, r.calls)
}

func (r *recorder) Decide(id string, approve bool) error { return r.add("Decide", id, approve) }
func (r *recorder) RunNow(routine string) error          { return r.add("RunNow", routine) }
func (r *recorder) SetPaused(routine string, paused bool) error {
	return r.add("SetPaused", routine, paused)
}
func (r *recorder) TakeBack()                          { _ = r.add("TakeBack") }
func (r *recorder) EndStuckOwner(pid int) error        { return r.add("EndStuckOwner", pid) }
func (r *recorder) SetStartAtLogin(on bool) error      { return r.add("SetStartAtLogin", on) }
func (r *recorder) SetPolicy(p ownership.Policy) error { return r.add("SetPolicy", string(p)) }
func (r *recorder) OpenConfig() error                  { return r.add("OpenConfig") }
func (r *recorder) Quit()                              { _ = r.add("Quit") }
func (r *recorder) History(routine string, limit int) ([]journal.Run, error) {
	return []journal.Run{{ID: 3, Routine: routine, Attempts: limit}}, r.add("History", routine, limit)
}
func (r *recorder) Output(runID int64) ([]byte, error) {
	return []byte(fmt.Sprintf("output of %d", runID)), r.add("Output", runID)
}

// TestEveryActionReachesTheApp calls each action on the window's side and checks that the
// app's side received it with its arguments, its results came back, and its error came back as
// text.
func TestEveryActionReachesTheApp(t *testing.T) {
	rec := &recorder{}
	c, _ := pipePair(t, rec, NewFeed())
	steps := []struct {
		do   func() error
		want call
	}{
		{func() error { return c.Decide("req-1", true) }, call{"Decide", []any{"req-1", true}}},
		{func() error { return c.RunNow("backup") }, call{"RunNow", []any{"backup"}}},
		{func() error { return c.SetPaused("", true) }, call{"SetPaused", []any{"", true}}},
		{func() error { c.TakeBack(); return nil }, call{"TakeBack", nil}},
		{func() error { return c.EndStuckOwner(4242) }, call{"EndStuckOwner", []any{4242}}},
		{func() error { return c.SetStartAtLogin(true) }, call{"SetStartAtLogin", []any{true}}},
		{func() error { return c.SetPolicy(ownership.PolicyDeny) }, call{"SetPolicy", []any{"deny"}}},
		{func() error { return c.OpenConfig() }, call{"OpenConfig", nil}},
		{func() error { c.Quit(); return nil }, call{"Quit", nil}},
		{func() error {
			runs, err := c.History("backup", 50)
			if len(runs) != 1 || runs[0].ID != 3 || runs[0].Routine != "backup" || runs[0].Attempts != 50 {
				return fmt.Errorf("History returned %+v", runs)
			}
			return err
		}, call{"History", []any{"backup", 50}}},
		{func() error {
			out, err := c.Output(12)
			if string(out) != "output of 12" {
				return fmt.Errorf("Output returned %q", out)
			}
			return err
		}, call{"Output", []any{int64(12)}}},
	}
	if n := reflect.TypeFor[Actions]().NumMethod(); n != len(steps) {
		t.Fatalf("Actions has %d methods, this test calls %d: add the new one here", n, len(steps))
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Errorf("%s: %v", s.want.method, err)
		}
		if got := rec.last(); !reflect.DeepEqual(got, s.want) {
			t.Errorf("the app received %v, want %v", got, s.want)
		}
	}
	err := c.RunNow("fail")
	if err == nil || !strings.Contains(err.Error(), "RunNow refused") || !strings.Contains(err.Error(), ownership.ErrNoRequest.Error()) {
		t.Errorf("RunNow(fail) = %v, want the app's error as text", err)
	}
	if errors.Is(err, ErrDisconnected) {
		t.Errorf("an action's own error reads as a lost connection: %v", err)
	}
}

// TestNextBringsTheNewest: the first Next returns the current state at once (and no raise or
// error from before the window connected); later ones wait for news, coalesce a burst of
// states into the newest, and carry raise requests, errors and the close.
func TestNextBringsTheNewest(t *testing.T) {
	feed := NewFeed()
	feed.Publish(session.State{Notice: "before"})
	feed.Raise()
	feed.ShowError(errors.New("old error"))
	c, _ := pipePair(t, &recorder{}, feed)

	u, err := c.Next(Cursor{})
	if err != nil || u.State.Notice != "before" || u.Raise || u.Error != "" || u.Closed {
		t.Fatalf("first Next = %+v, %v; want the current state only", u, err)
	}
	cur := u.Cursor

	got := make(chan Update, 1)
	go func() {
		u, err := c.Next(cur)
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	select {
	case u := <-got:
		t.Fatalf("Next returned %+v with nothing new", u)
	case <-time.After(200 * time.Millisecond):
	}
	feed.Publish(session.State{Notice: "woken"})
	if u = <-got; u.State.Notice != "woken" || u.Raise || u.Error != "" {
		t.Errorf("the waiting Next = %+v, want the new state alone", u)
	}
	cur = u.Cursor
	for i := range 3 { // a window behind gets the newest state only
		feed.Publish(session.State{Notice: fmt.Sprint("burst ", i)})
	}
	if u, err = c.Next(cur); err != nil || u.State.Notice != "burst 2" {
		t.Errorf("Next after a burst = %q, %v; want burst 2", u.State.Notice, err)
	}
	cur = u.Cursor

	feed.Raise()
	if u, err = c.Next(cur); err != nil || !u.Raise || u.State.Notice != "burst 2" {
		t.Errorf("after Raise: %+v, %v", u, err)
	}
	cur = u.Cursor
	feed.ShowError(errors.New("pause failed"))
	if u, err = c.Next(cur); err != nil || u.Error != "pause failed" || u.Raise {
		t.Errorf("after ShowError: %+v, %v", u, err)
	}
	cur = u.Cursor
	feed.Close()
	if u, err = c.Next(cur); err != nil || !u.Closed {
		t.Errorf("after Close: %+v, %v", u, err)
	}
}

// TestServeEndsWhenTheWindowGoes: a window that disconnects while its Next waits ends Serve
// (no goroutine is left waiting on the feed), and the client's calls then say the connection
// has ended.
func TestServeEndsWhenTheWindowGoes(t *testing.T) {
	feed := NewFeed()
	c, served := pipePair(t, &recorder{}, feed)
	u, err := c.Next(Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { _, err := c.Next(u.Cursor); waiting <- err }()
	time.Sleep(100 * time.Millisecond) // let the call reach the parent's side and wait there
	_ = c.Close()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still runs 10 s after the window process closed its end")
	}
	if err := <-waiting; !errors.Is(err, ErrDisconnected) {
		t.Errorf("the waiting Next returned %v, want ErrDisconnected", err)
	}
	if err := c.RunNow("x"); !errors.Is(err, ErrDisconnected) {
		t.Errorf("RunNow after the end = %v, want ErrDisconnected", err)
	}
}

// Serve returns when the app's side of the pipes is closed too (the window process sees EOF).
func TestClientSeesTheAppGo(t *testing.T) {
	toParentR, toParentW, _ := os.Pipe()
	toChildR, toChildW, _ := os.Pipe()
	c := NewClient(NewConn(toChildR, toParentW), nil)
	defer c.Close()
	waiting := make(chan error, 1)
	go func() { _, err := c.Next(Cursor{State: 5}); waiting <- err }()
	_, _ = io.ReadAtLeast(toParentR, make([]byte, 1), 1) // the call was sent
	_ = toParentR.Close()
	_ = toChildW.Close() // the app died: its ends close
	select {
	case err := <-waiting:
		if !errors.Is(err, ErrDisconnected) {
			t.Errorf("Next = %v, want ErrDisconnected", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next still waits 10 s after the app's end closed")
	}
}
