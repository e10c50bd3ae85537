package skew

import (
	"testing"
	"time"
)

func TestAge(t *testing.T) {
	now := time.Date(2026, 12, 7, 14, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		then time.Time
		want time.Duration
	}{
		{now.Add(-3 * time.Second), 3 * time.Second},
		{now, 0},
		{now.Add(9 * time.Millisecond), 0}, // the stamp's clock ran ahead: just now
		{now.Add(2 * time.Hour), 0},
		{now.Add(-48 * time.Hour), 48 * time.Hour},
	} {
		if got := Age(c.then, now); got != c.want {
			t.Errorf("Age(now%+v) = %v, want %v", c.then.Sub(now), got, c.want)
		}
	}
}
