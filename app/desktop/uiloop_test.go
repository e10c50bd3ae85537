//go:build !nogui

package desktop

import (
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/routinely/routinely/app/desktop/session"
)

// While Fyne's loop is idle (a --background start), the tray sees every snapshot and the window
// none; a request for the window meanwhile is reported when the loop starts, which then gets the
// newest snapshot once; after the loop ended nothing reaches the window.
func TestPublisherFeedsTrayAlwaysAndWindowOnlyWhileLive(t *testing.T) {
	test.NewTempApp(t) // fyne.Do runs functions at once on the test driver
	loop := newUILoop()
	var tray, window []string
	pub := &publisher{loop: loop,
		tray:   func(s session.State) { tray = append(tray, s.Notice) },
		window: func(s session.State) { window = append(window, s.Notice) },
	}
	pub.publish(session.State{Notice: "one"})
	pub.publish(session.State{Notice: "two"})
	if len(tray) != 2 || len(window) != 0 {
		t.Fatalf("idle loop: tray got %q, window got %q; want both for the tray, none for the window", tray, window)
	}
	if loop.do(func() { t.Error("a function ran on an idle loop") }) {
		t.Error("do reported an idle loop as live")
	}
	shown := 0
	loop.show(func() { shown++ })
	if shown != 0 {
		t.Error("the window was shown before the loop started")
	}
	if ok, show := loop.begin(); !ok || !show {
		t.Errorf("begin = %t, %t; want the loop started and the pending request for the window reported", ok, show)
	}
	pub.flush()
	if len(window) != 1 || window[0] != "two" {
		t.Errorf("after the start the window got %q, want the newest snapshot once", window)
	}
	loop.show(func() { shown++ })
	pub.publish(session.State{Notice: "three"})
	if shown != 1 || len(window) != 2 || window[1] != "three" {
		t.Errorf("live loop: shown %d times, window got %q", shown, window)
	}

	loop.end()
	if !loop.ended() || loop.live() {
		t.Error("the loop is not ended after end")
	}
	pub.stop()
	pub.publish(session.State{Notice: "four"})
	loop.show(func() { shown++ })
	if len(window) != 2 || shown != 1 || len(tray) != 4 {
		t.Errorf("ended loop: window got %q, shown %d times, tray got %q", window, shown, tray)
	}
}

// Once the app is shutting down, a request for the window (a tray click, a takeover prompt, the
// no-tray fallback) must not start Fyne's loop: nothing would quit it.
func TestShutLoopNeverStarts(t *testing.T) {
	test.NewTempApp(t)
	loop := newUILoop()
	loop.shut()
	loop.show(func() { t.Error("the window was shown by a shut loop") })
	if ok, _ := loop.begin(); ok {
		t.Error("begin started a loop that was shut while idle")
	}
	if loop.do(func() { t.Error("a function ran on a shut loop") }) {
		t.Error("do reported a shut loop as live")
	}

	// A live loop is not shut: its own Quit ends it.
	live := newUILoop()
	live.begin()
	live.shut()
	ran := false
	if !live.do(func() { ran = true }) || !ran {
		t.Error("shut ended a live loop")
	}
}

// Where the tray lives on the UI loop (macOS, Windows), tray updates wait for the loop and
// travel with the window's, and are dropped after stop like the window's.
func TestPublisherTrayOnUILoop(t *testing.T) {
	test.NewTempApp(t)
	loop := newUILoop()
	var tray []string
	pub := &publisher{loop: loop, trayOnUI: true, tray: func(s session.State) { tray = append(tray, s.Notice) }}
	pub.publish(session.State{Notice: "idle"})
	if len(tray) != 0 {
		t.Fatalf("tray updated off the UI loop: %q", tray)
	}
	loop.begin()
	pub.flush()
	pub.publish(session.State{Notice: "live"})
	pub.stop()
	pub.publish(session.State{Notice: "stopped"})
	if len(tray) != 2 || tray[0] != "idle" || tray[1] != "live" {
		t.Errorf("tray got %q, want the newest state at the start, then each live one", tray)
	}
}
