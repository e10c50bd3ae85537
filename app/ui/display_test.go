package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// hostile is text from outside that would drive a terminal or garble a label: OSC 52 (sets the
// clipboard), BEL, CSI 2J (clears the screen), the C1 CSI U+009B, a lone CR, an invalid byte.
const (
	hostile        = "x\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009bok\rFAKE\xff"
	hostileEscaped = `x\u001b]52;c;ZXZpbA==\u0007\u001b[2J\u009bok\u000dFAKE\xff`
)

// hostileOutput is a recorder whose runs printed hostile.
type hostileOutput struct{ recorder }

func (*hostileOutput) Output(int64) ([]byte, error) { return []byte(hostile + "\nnext line\n"), nil }

// noControls fails the test if text holds a control character other than newline and tab.
func noControls(t *testing.T, what, text string) {
	t.Helper()
	for i, r := range text {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r == '\uFFFD') {
			t.Errorf("%s holds %U at byte %d: %q", what, r, i, text)
			return
		}
	}
}

// The window shows text from outside with its control characters escaped, as the CLI prints
// it: a run's output, a run's reason in the tables, hub values in the devices line and the
// banner.
func TestWindowEscapesControlCharacters(t *testing.T) {
	test.NewTempApp(t)
	rec := &hostileOutput{}
	v := NewMainView(rec)
	s := hubWindowState()
	s.Routines[0].Last.Reason = hostile
	s.Hub.Devices[1].Name = "laptop" + hostile
	s.Hub.Connected, s.Hub.Error = false, hostile
	v.Update(s)

	if got := v.Owner.devices.Text; !strings.Contains(got, "laptop"+hostileEscaped) {
		t.Errorf("devices line %q does not show the name escaped", got)
	}
	noControls(t, "the devices line", v.Owner.devices.Text)
	body := v.Banner.body.Segments[0].(*widget.TextSegment).Text
	if !strings.Contains(body, "("+hostileEscaped+")") {
		t.Errorf("banner %q does not show the hub's error escaped", body)
	}
	noControls(t, "the banner", body)

	cell := NewTipLabel(hostile)
	noControls(t, "a new table cell", cell.Text)
	cell.SetText(RoutineCells(s.Routines[0], s.Now, thisDevice(s))[colLast].Bottom)
	if !strings.Contains(cell.Text, hostileEscaped) {
		t.Errorf("last-run cell %q does not show the reason escaped", cell.Text)
	}
	noControls(t, "the last-run cell", cell.Text)

	h := NewHistoryView(rec)
	h.background = func(f func()) { f() }
	h.Shown()
	eventually(t, func() bool { return len(h.runs) == 1 })
	h.table.Select(widget.TableCellID{Row: 0, Col: hcolOutcome})
	eventually(t, func() bool { return strings.Contains(h.output.Text, "next line") })
	if want := hostileEscaped + "\nnext line\n"; h.output.Text != want {
		t.Errorf("output pane %q, want %q", h.output.Text, want)
	}
}
