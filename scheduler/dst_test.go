package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/config"
	"github.com/routinely/routinely/scheduler/journal"
)

// TestDSTSlots: non-existent local times run once right after the transition; repeated ones
// once, at the first occurrence, for whole-hour and 30-minute shifts.
func TestDSTSlots(t *testing.T) {
	cases := []struct {
		zone, kind, expr string
		from             string // local wall time, RFC 3339 without zone
		want             []string
	}{
		// New York spring forward 2026-03-08 02:00 EST → 03:00 EDT.
		{"America/New_York", "at", "02:30", "2026-03-07T12:00:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"America/New_York", "cron", "*/30 1-3 * * *", "2026-03-08T00:00:00",
			[]string{"2026-03-08T01:00:00-05:00", "2026-03-08T01:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00", "2026-03-09T01:00:00-04:00"}},
		// New York fall back 2026-11-01 02:00 EDT → 01:00 EST: 01:30 once, the EDT one.
		{"America/New_York", "at", "01:30", "2026-10-31T12:00:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"America/New_York", "cron", "0,30 1 * * *", "2026-11-01T00:00:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-02T01:00:00-05:00"}},
		// Berlin 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
		{"Europe/Berlin", "at", "02:30", "2026-03-28T12:00:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"Europe/Berlin", "at", "02:30", "2026-10-24T12:00:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		// Lord Howe: 30-minute shifts. 2026-10-04 02:00 +10:30 → 02:30 +11; 2026-04-05 02:00 +11 → 01:30 +10:30.
		{"Australia/Lord_Howe", "at", "02:15", "2026-10-03T12:00:00",
			[]string{"2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"}},
		{"Australia/Lord_Howe", "at", "01:45", "2026-04-04T12:00:00",
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %s %s", c.zone, c.kind, c.expr), func(t *testing.T) {
			r := dstRoutine(t, c.zone, c.kind, c.expr)
			from, err := time.ParseInLocation("2006-01-02T15:04:05", c.from, r.Location)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Preview(r, from, len(c.want))
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.want {
				if got[i].Format(time.RFC3339) != w {
					t.Errorf("slot %d = %s, want %s", i, got[i].Format(time.RFC3339), w)
				}
			}
		})
	}
}

func dstRoutine(t *testing.T, zone, kind, expr string) *config.Routine {
	t.Helper()
	line := fmt.Sprintf("cron = %q", expr)
	if kind == "at" {
		line = fmt.Sprintf("at = [%q]", expr)
	}
	cfg, err := config.Parse("routines.toml", []byte(fmt.Sprintf("[[routine]]\nname = \"r\"\ntimezone = %q\n%s\nnotify = { title = \"t\" }\n", zone, line)))
	if err != nil || len(cfg.Routines) != 1 {
		t.Fatalf("config: %v %v", err, cfg.Problems)
	}
	return cfg.Routines[0]
}

// TestDSTArmedTimersMatchPreview drives gocron with a fake clock across the New York spring
// forward and fall back: the armed timers claim exactly the previewed slots, each once.
func TestDSTArmedTimersMatchPreview(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	for _, start := range []time.Time{
		time.Date(2026, 3, 7, 0, 0, 0, 0, ny),
		time.Date(2026, 10, 31, 0, 0, 0, 0, ny),
	} {
		h := newHarness(t, `[[routine]]
name = "halfhourly"
cron = "*/30 1-3 * * *"
timezone = "America/New_York"
notify = { title = "x" }
`, start)
		h.start()
		r := h.e.cfg.Routines[0]
		want, _ := Preview(r, start, 13) // 6 on day one, then the DST day
		h.advance(3*24*time.Hour, 15*time.Minute)
		h.stop()
		runs := runsOf(t, h.j, "halfhourly")
		if len(runs) < len(want) {
			t.Fatalf("%s: %d runs, want at least %d", start, len(runs), len(want))
		}
		for i, w := range want {
			if !runs[i].Slot.Equal(w) || runs[i].Outcome != journal.OutcomeSuccess || runs[i].Trigger != journal.TriggerSchedule {
				t.Fatalf("%s: run %d = %s %s %s, want slot %s", start, i, runs[i].Slot.In(ny).Format(time.RFC3339), runs[i].Outcome, runs[i].Trigger, w.Format(time.RFC3339))
			}
		}
	}
}
