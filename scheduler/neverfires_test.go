package scheduler

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"
)

// gocron never gets a zero next time from a schedule without slots (it would loop forever
// arming it, at 100 % CPU, and no other job would fire): a job on such a schedule, armed at
// Start and while running, leaves the other jobs firing and Shutdown prompt.
func TestScheduleWithoutSlotsDoesNotStallGocron(t *testing.T) {
	s, err := gocron.NewScheduler()
	if err != nil {
		t.Fatal(err)
	}
	never := gocron.WithCronImplementation(cronAdapter{s: noSlots{}, lead: claimLead})
	var ticks atomic.Int32
	// A stalled gocron blocks NewJob and Shutdown too, so the steps run apart from the test's
	// goroutine, which gives up on them after a generous deadline.
	steps := make(chan string, 1)
	go func() {
		defer close(steps)
		if _, err := s.NewJob(gocron.CronJob("never-1", false), gocron.NewTask(func() {}), never); err != nil {
			steps <- err.Error()
			return
		}
		if _, err := s.NewJob(gocron.DurationJob(50*time.Millisecond), gocron.NewTask(func() { ticks.Add(1) })); err != nil {
			steps <- err.Error()
			return
		}
		s.Start()
		if _, err := s.NewJob(gocron.CronJob("never-2", false), gocron.NewTask(func() {}), never); err != nil {
			steps <- err.Error()
			return
		}
		from := ticks.Load()
		for ticks.Load() < from+3 {
			time.Sleep(5 * time.Millisecond)
		}
		if err := s.Shutdown(); err != nil {
			steps <- err.Error()
		}
	}()
	select {
	case msg, ok := <-steps:
		if ok {
			t.Fatal(msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("gocron stalled: the other job fired %d times, NewJob or Shutdown did not return", ticks.Load())
	}
	if n := (cronAdapter{s: noSlots{}}).Next(time.Now()); n.IsZero() || time.Until(n) < 9*365*24*time.Hour {
		t.Fatalf("Next = %s, want about 10 years ahead", n)
	}
}

// noSlots is the slot computation of a schedule that never fires (a cron for 31 February,
// which validation refuses, computes the same: zero for every instant).
type noSlots struct{}

func (noSlots) Next(time.Time) time.Time { return time.Time{} }
