//go:build unix

package runclock

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// stopFor stops this whole process with a real SIGSTOP and returns once another process has
// continued it, seconds (sleep(1) syntax) later.
func stopFor(t *testing.T, seconds string) {
	t.Helper()
	cont := exec.Command("sh", "-c", "sleep "+seconds+"; kill -CONT "+strconv.Itoa(os.Getpid()))
	if err := cont.Start(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill(2) may return before every thread has stopped; the continuing process ends only once
	// this one was stopped and continued.
	if err := cont.Wait(); err != nil {
		t.Fatalf("the continuing process: %v", err)
	}
}

// A span across a real SIGSTOP of this process: the stop does not count, whether the reader
// looks before the watcher has run again (the stall still going on) or after.
func TestAStopDoesNotCount(t *testing.T) {
	for _, after := range []time.Duration{0, 300 * time.Millisecond} {
		s := Start()
		began := time.Now()
		stopFor(t, "1.5")
		time.Sleep(after)
		d, real := s.End(), time.Since(began)
		if real < 1400*time.Millisecond {
			t.Fatalf("the stop lasted %v, want 1.5 s (was the process stopped?)", real)
		}
		// Counted: the time before the stop, after (the sleep), and at most a tick of the stop.
		if d > after+gap {
			t.Errorf("read %v after the stop: the span says %v of %v, want about %v (the stop not counted)", after, d, real, after)
		}
		if d < after {
			t.Errorf("read %v after the stop: the span says %v, less than the running time since", after, d)
		}
	}
}

// AfterFunc counts running time: a stop in the middle pushes the call back by the stop.
func TestAfterFuncWaitsOutAStop(t *testing.T) {
	s := Start()
	defer s.End()
	called := make(chan time.Time, 1)
	stop := s.AfterFunc(time.Second, func() { called <- time.Now() })
	defer stop()
	began := time.Now()
	time.Sleep(300 * time.Millisecond)
	stopFor(t, "1.5")
	select {
	case at := <-called:
		// 0.3 s before the stop, 1.5 s stopped, then the remaining 0.7 s of running time.
		if d := at.Sub(began); d < 2300*time.Millisecond {
			t.Errorf("called %v after the start, want 1 s of running time after a 1.5 s stop (2.5 s)", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not called 5 s after the start")
	}
}
