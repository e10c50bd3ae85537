package journal

import (
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkClaims: fenced, unique slot claims per second on a real journal file, against raw
// SQLite inserts of the same row shape with the same pragmas.
func BenchmarkClaims(b *testing.B) {
	b.Run("journal", func(b *testing.B) {
		j := acquiredJournal(b)
		base := time.Unix(1_700_000_000, 0)
		b.ResetTimer()
		for i := range b.N {
			if _, err := j.Claim(Claim{Routine: "r" + strconv.Itoa(i%100), Slot: base.Add(time.Duration(i) * time.Second),
				Trigger: TriggerSchedule, Outcome: OutcomeRunning, Started: base}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
	})
	b.Run("journal-parallel", func(b *testing.B) {
		// 64 routines claiming at once, as when many are due in the same second (group commit).
		j := acquiredJournal(b)
		base := time.Unix(1_700_000_000, 0)
		var next atomic.Int64
		b.SetParallelism(32)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := next.Add(1)
				if _, err := j.Claim(Claim{Routine: "r" + strconv.FormatInt(i%64, 10), Slot: base.Add(time.Duration(i) * time.Second),
					Trigger: TriggerSchedule, Outcome: OutcomeRunning, Started: base}); err != nil && !errors.Is(err, ErrSlotClaimed) {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
	})
	b.Run("raw-sqlite", func(b *testing.B) {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(5000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		db, err := sql.Open("sqlite", uriT(b, filepath.Join(b.TempDir(), "raw.db"), q))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE runs (id INTEGER PRIMARY KEY, routine TEXT, slot_key TEXT, slot INTEGER,
			trigger TEXT, epoch INTEGER, outcome TEXT, started INTEGER, UNIQUE (routine, slot_key))`); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := db.Exec(`INSERT INTO runs (routine, slot_key, slot, trigger, epoch, outcome, started) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				"r"+strconv.Itoa(i%100), strconv.Itoa(i), i, TriggerSchedule, 1, OutcomeRunning, i); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
	})
}
