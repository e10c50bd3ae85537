//go:build linux

package ownership

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Benchmarks of the ownership protocol (goals, in the README: crash recovery p99 ≤ 5 ms, takeover median ≤ 300 ms, heartbeat
// ≤ 1 ms). Run: go test -run '^$' -bench . -benchtime 50x ./ownership/

// reportLatencies reports median and p99 in milliseconds (and the median as ns/op).
func reportLatencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	med := lat[len(lat)/2]
	p99 := lat[min(len(lat)-1, (len(lat)*99+99)/100-1)]
	b.ReportMetric(float64(med.Nanoseconds()), "ns/op")
	b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// benchCrash measures SIGKILL of the owner → a standby process owns, over ≥50 trials.
// Each trial's standby becomes the next trial's owner, so one process starts per trial.
func benchCrash(b *testing.B, mode string, own, wait func(*proc)) {
	dir := testDir(b)
	trials := max(b.N, 50)
	// Owners heartbeat at the default interval, as in production.
	hb := fmt.Sprintf("%s=%d", envInterval, DefaultHeartbeat.Milliseconds())
	owner := startHelper(b, mode, dir, hb)
	own(owner)
	owner.expect("owned", long)
	lat := make([]time.Duration, 0, trials)
	b.ResetTimer()
	for range trials {
		standby := startHelper(b, mode, dir, hb)
		wait(standby)
		standby.expect("waiting", long)
		// Let the standby reach its blocked flock, then kill at a random instant after that.
		time.Sleep(60*time.Millisecond + rand.N(20*time.Millisecond))
		killed := time.Now()
		owner.kill()
		_, _, at, _ := parseOwned(b, standby.expect("owned", long))
		lat = append(lat, at.Sub(killed))
		owner = standby
	}
	b.StopTimer()
	reportLatencies(b, lat)
}

func BenchmarkCrashRecovery(b *testing.B) {
	benchCrash(b, "contender",
		func(p *proc) { p.send("acquire") },
		func(p *proc) { p.send("wait") })
}

// BenchmarkCrashRecoveryBareFlock is the baseline: a bare blocking gofrs/flock Lock, with no
// epoch, record or heartbeat.
func BenchmarkCrashRecoveryBareFlock(b *testing.B) {
	benchCrash(b, "bareflock", func(*proc) {}, func(*proc) {})
}

// BenchmarkTakeoverAllow measures request → new owner against an idle owner with policy allow.
func BenchmarkTakeoverAllow(b *testing.B) {
	dir := testDir(b)
	trials := max(b.N, 20)
	lat := make([]time.Duration, 0, trials)
	for range trials {
		owner := startHelper(b, "contender", dir, envPolicy+"="+string(PolicyAllow))
		owner.send("acquire")
		owner.expect("owned", long)
		start := time.Now()
		h, err := Takeover(context.Background(), Options{Dir: dir}, TakeoverOptions{Timeout: long})
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		if err := h.Release(context.Background()); err != nil {
			b.Fatal(err)
		}
		owner.stop()
	}
	reportLatencies(b, lat)
}

// BenchmarkHeartbeat measures one heartbeat tick: guard identity check, record rewrite (atomic,
// without fsync), takeover request check.
func BenchmarkHeartbeat(b *testing.B) {
	dir := testDir(b)
	h, err := Acquire(context.Background(), Options{Dir: dir, HeartbeatInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Release(context.Background())
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t := time.Now()
		if !h.beat() {
			b.Fatal("guard lost")
		}
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
}
