package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/routinely/routinely/hub"
)

// Stamps from a clock that runs a little ahead of this one (the owner's tick and last run, a
// device's last seen) read "now", never as if they were to come.
func TestStampsAheadOfThisClockReadNow(t *testing.T) {
	s := standbyState()
	rec := s.Owner.Record
	rec.LastTickAt = s.Now.Add(5 * time.Second)
	rec.LastJob.Started = s.Now.Add(5 * time.Second)
	rec.HeartbeatAt, rec.HeartbeatIntervalMS = s.Now.Add(9*time.Millisecond), 0
	if got := tickText(s); !strings.HasSuffix(got, "(now)") {
		t.Errorf("last tick 5 s ahead reads %q, want now", got)
	}
	if got := lastRunText(s); !strings.Contains(got, "(now)") {
		t.Errorf("last run 5 s ahead reads %q, want now", got)
	}
	if got := heartbeatText(s); got != "0s ago" {
		t.Errorf("heartbeat 9 ms ahead reads %q, want 0s ago", got)
	}
	s.Hub = &hub.State{Device: "desktop", Devices: []hub.DeviceState{{Name: "studio", LastSeen: s.Now.Add(3 * time.Second)}}}
	if got := DevicesText(s); !strings.HasSuffix(got, "studio last seen now") {
		t.Errorf("a device whose clock is 3 s ahead reads %q, want last seen now", got)
	}
}
