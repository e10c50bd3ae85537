package hub_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler"
)

// BenchmarkHubClaim measures one device's claim of a fresh slot through a real hub on loopback
// (run key, slot key, both fsynced by the hub) and its release; it reports the p50 and p99 of
// the claim alone.
func BenchmarkHubClaim(b *testing.B) {
	s := startHubB(b)
	defer s.Shutdown()
	d := joinB(b, s.URL, s.Token)
	defer d.Stop()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		slot := slot0.Add(time.Duration(i) * time.Second)
		t0 := time.Now()
		c, err := d.Claim(context.Background(), "bench", slot, time.Hour)
		lat = append(lat, time.Since(t0))
		if err != nil || c.Verdict != scheduler.HubWon {
			b.Fatalf("claim %d: %+v %v", i, c, err)
		}
		d.Release(c, "success")
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
