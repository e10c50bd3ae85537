package config

import (
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

func mustCalendar(t testing.TB, expr string) *calendarSchedule {
	t.Helper()
	spec, err := parseCron(expr)
	if err != nil {
		t.Fatal(err)
	}
	return &calendarSchedule{specs: []*cron.SpecSchedule{spec}, loc: time.UTC}
}

// A cron that never fires and an interval past MaxEvery are validation problems at the key's
// line and column; the rarest real dates (29 February) and MaxEvery itself are fine.
func TestScheduleThatNeverFiresOrOverflowsIsRefused(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, `[[routine]]
name = "feb-31"
cron = "0 0 31 2 *"
notify = { title = "x" }

[[routine]]
name = "nov-31"
cron = "0 0 0 31 4,6,9,11 *"
notify = { title = "x" }

[[routine]]
name = "leap-day"
cron = "0 12 29 2 *"
notify = { title = "x" }

[[routine]]
name = "huge"
every = "999999h"
notify = { title = "x" }

[[routine]]
name = "yearly"
every = "8784h"
notify = { title = "x" }
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Routine("leap-day") == nil || cfg.Routine("yearly") == nil || len(cfg.Routines) != 2 {
		t.Fatalf("valid routines: %v; problems %v", cfg.Routines, cfg.Problems)
	}
	var all []string
	for _, p := range cfg.Problems {
		all = append(all, p.String())
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{
		`routines.toml:3:1: cron "0 0 31 2 *" never fires: no date matches within 10 years (is it a day the month does not have, like 31 February?)`,
		`routines.toml:8:1: cron "0 0 0 31 4,6,9,11 *" never fires`,
		`routines.toml:18:1: every must be a duration from 1s to 8784h (366 days), got "999999h"; for longer periods use a cron or at schedule`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q in:\n%s", want, joined)
		}
	}
}

// Slot computation is bounded: a schedule without slots answers zero at once, and a real one
// is found past the cron library's five-year search (29 February skips 2100).
func TestCalendarNextSearchesTheHorizon(t *testing.T) {
	never := mustCalendar(t, "0 0 31 2 *")
	for i := range 1000 { // a few microseconds each; a spin would never return
		if n := never.Next(time.Date(2026+i%300, 1, 1, 0, 0, 0, 0, time.UTC)); !n.IsZero() {
			t.Fatalf("31 February fired at %s", n)
		}
	}
	leap := mustCalendar(t, "0 12 29 2 *")
	for from, want := range map[time.Time]time.Time{
		time.Date(2097, 3, 1, 0, 0, 0, 0, time.UTC):   time.Date(2104, 2, 29, 12, 0, 0, 0, time.UTC),
		time.Date(2096, 2, 29, 12, 0, 0, 0, time.UTC): time.Date(2104, 2, 29, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC):   time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC),
	} {
		if got := leap.Next(from); !got.Equal(want) {
			t.Errorf("leap day after %s = %s, want %s", from, got, want)
		}
	}
}
