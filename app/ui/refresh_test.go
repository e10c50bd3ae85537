package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/ownership"
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
