//go:build !nogui

package desktop

import (
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/routinely/routinely/app/ui"
)

// While Fyne's loop is idle (a --background start), the tray sees every snapshot and the window
// none; the first request for the window starts the loop, which then gets the newest snapshot
// once; after the loop ended nothing reaches the window.
func TestPublisherFeedsTrayAlwaysAndWindowOnlyWhileLive(t *testing.T) {
	test.NewTempApp(t) // fyne.Do runs functions at once on the test driver
	loop := newUILoop()
	var tray, window []string
	pub := &publisher{loop: loop,
		tray:   func(s ui.State) { tray = append(tray, s.Notice) },
		window: func(s ui.State) { window = append(window, s.Notice) },
	}
	pub.publish(ui.State{Notice: "one"})
	pub.publish(ui.State{Notice: "two"})
	if len(tray) != 2 || len(window) != 0 {
		t.Fatalf("idle loop: tray got %q, window got %q; want both for the tray, none for the window", tray, window)
	}
	if loop.do(func() { t.Error("a function ran on an idle loop") }) {
		t.Error("do reported an idle loop as live")
	}
	select {
	case <-loop.startReq:
		t.Fatal("the loop was asked to start before anyone wanted the window")
	default:
	}

	shown := 0
	loop.show(func() { shown++ })
	select {
	case <-loop.startReq:
	case <-time.After(time.Second):
		t.Fatal("asking for the window did not ask Run to start the loop")
	}
	if shown != 0 {
		t.Error("the window was shown before the loop started")
	}
	if !loop.begin() {
		t.Error("begin did not report the pending request for the window")
	}
	pub.flush()
	if len(window) != 1 || window[0] != "two" {
		t.Errorf("after the start the window got %q, want the newest snapshot once", window)
	}
	loop.show(func() { shown++ })
	pub.publish(ui.State{Notice: "three"})
	if shown != 1 || len(window) != 2 || window[1] != "three" {
		t.Errorf("live loop: shown %d times, window got %q", shown, window)
	}

	if !loop.end() {
		t.Error("end did not report the loop as having been live")
	}
	pub.stop()
	pub.publish(ui.State{Notice: "four"})
	loop.show(func() { shown++ })
	if len(window) != 2 || shown != 1 || len(tray) != 4 {
		t.Errorf("ended loop: window got %q, shown %d times, tray got %q", window, shown, tray)
	}
}
