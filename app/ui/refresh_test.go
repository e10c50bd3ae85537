package ui

import (
	"slices"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler"
)

// The state arrives every second and the window redraws what it refreshes: the banner rebuilds
// (and refreshes) its text only when the text changed.
func TestWedgeBannerRefreshesOnlyOnNewText(t *testing.T) {
	test.NewTempApp(t)
	b := NewWedgeBanner(&recorder{}, nil)
	s := standbyState()
	s.Owner.Diagnoses = []ownership.Diagnosis{{Kind: ownership.DiagNotHeartbeating, Message: "owner pid 4242 is silent"}}
	b.Update(s)
	first := b.body.Segments[0]
	b.Update(s)
	if b.body.Segments[0] != first {
		t.Error("the banner rebuilt its text for an update that did not change it")
	}
	s.Owner.Diagnoses[0].Since = s.Now.Add(-time.Minute) // the sentence now says since when
	b.Update(s)
	if seg, ok := b.body.Segments[0].(*widget.TextSegment); !ok || seg == first || seg.Text != BannerText(s) {
		t.Errorf("the banner did not show its new text: %#v", b.body.Segments[0])
	}
}

// Between events, a healthy owner's dashboard stands still: for 25 s in which only heartbeats
// arrive, no label of the owner panel and no cell of the routines table changes its text (each
// new text costs the window a redraw and a texture), while a routine due in under a minute still
// says so. Once a heartbeat is late, the panel shows its age.
func TestTheDashboardStandsStillBetweenEvents(t *testing.T) {
	test.NewTempApp(t)
	s := standbyState()
	s.Now = fixtureNow.Add(time.Second) // 09:30:01: no whole minute ends for any label in the next 25 s
	soon := s.Now.Add(50 * time.Second)
	s.Routines = append(s.Routines, scheduler.RoutineState{Name: "tick", Schedule: "every 10s", Action: "run", Next: &soon})
	p := NewOwnerPanel(func() {})
	look := func(s session.State) []string {
		p.Update(s)
		var texts []string
		for _, f := range ownerFields {
			texts = append(texts, f+": "+p.values[f].Text)
		}
		for _, r := range s.Routines {
			for _, c := range RoutineCells(r, s.Now, "") {
				texts = append(texts, r.Name+": "+c.Top+" / "+c.Bottom)
			}
		}
		return texts
	}
	first := look(s)
	if !slices.Contains(first, "tick: "+Clock(soon, s.Now)+" / in < 1m") {
		t.Errorf("the routine due in 50 s shows %q, want its time and \"in < 1m\"", first)
	}
	for sec := 1; sec <= 25; sec++ {
		later := s
		later.Now = s.Now.Add(time.Duration(sec) * time.Second)
		rec := *s.Owner.Record
		rec.HeartbeatAt = later.Now.Add(-time.Duration(sec%2) * time.Second) // a heartbeat every 2 s
		later.Owner.Record = &rec
		if got := look(later); !slices.Equal(got, first) {
			t.Fatalf("%d s later, with only heartbeats meanwhile, the dashboard changed:\n%q\nwas\n%q", sec, got, first)
		}
	}
	late := s
	rec := *s.Owner.Record
	rec.HeartbeatAt = s.Now.Add(-7 * time.Second) // interval 2 s
	late.Owner.Record = &rec
	p.Update(late)
	if got := p.values["Heartbeat"].Text; got != "7s ago" {
		t.Errorf("a heartbeat 7 s old (every 2 s) shows %q, want its age", got)
	}
}
