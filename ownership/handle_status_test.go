//go:build linux || windows

package ownership

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

// kinds lists st's diagnosis kinds, with the time each says since.
func kinds(st Status) []Diagnosis {
	out := make([]Diagnosis, len(st.Diagnoses))
	for i, d := range st.Diagnoses {
		out[i] = Diagnosis{Kind: d.Kind, Since: d.Since}
	}
	return out
}

// An owner shows itself (Handle.Status, from memory) as an observer's look at its state
// directory shows it: held, alive, its own record, and the same diagnoses, in each state the
// record can say.
func TestHandleStatusIsWhatAnObserverSees(t *testing.T) {
	dir := testDir(t)
	h := acquireT(t, Options{Dir: dir, HeartbeatInterval: 100 * time.Millisecond})
	since := time.Now().Add(-7 * time.Second).Truncate(time.Millisecond)
	steps := []struct {
		name  string
		apply func()
		want  []DiagnosisKind
	}{
		{"healthy", func() {}, nil},
		{"overdue work", func() { h.NoteTick(time.Now().Add(-2 * stallGrace)) }, []DiagnosisKind{DiagStalled}},
		{"journal unwritable", func() { h.NoteJournal(since, errors.New("database is locked (5) (SQLITE_BUSY)")) },
			[]DiagnosisKind{DiagJournalUnwritable}},
		{"healthy again", func() { h.NoteTick(time.Now().Add(time.Hour)); h.NoteJournal(time.Time{}, nil) }, nil},
	}
	for _, step := range steps {
		step.apply()
		var seen Status
		eventually(t, long, step.name+" written", func() bool {
			seen, _ = Inspect(dir)
			got := make([]DiagnosisKind, 0, len(seen.Diagnoses))
			for _, d := range seen.Diagnoses {
				got = append(got, d.Kind)
			}
			return slices.Equal(got, step.want) || len(got) == 0 && step.want == nil
		})
		self := h.Status()
		if !self.Held || !self.Alive || self.Record == nil || self.Record.PID != os.Getpid() || self.HolderPID != os.Getpid() {
			t.Fatalf("%s: the owner shows itself as %+v, want held and alive with its own pid", step.name, self)
		}
		if self.Record.Token != seen.Record.Token || self.Record.Epoch != seen.Record.Epoch || self.Record.State != seen.Record.State {
			t.Errorf("%s: own record %+v, the observer read %+v", step.name, *self.Record, *seen.Record)
		}
		if !slices.EqualFunc(kinds(self), kinds(seen), func(a, b Diagnosis) bool { return a.Kind == b.Kind && a.Since.Equal(b.Since) }) {
			t.Errorf("%s: the owner diagnoses itself %+v, an observer %+v", step.name, self.Diagnoses, seen.Diagnoses)
		}
		if self.HeartbeatAge < 0 || self.HeartbeatAge > 10*h.interval {
			t.Errorf("%s: heartbeat age %s, want within a few beats", step.name, self.HeartbeatAge)
		}
	}
}
