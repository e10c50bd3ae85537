package autostart

import (
	"strings"
	"testing"
)

func TestHint(t *testing.T) {
	for _, tc := range []struct {
		goos string
		st   Status
		want string // substring; "" means no hint
	}{
		{"linux", Status{State: DisabledByUser}, "Hidden=true"},
		{"windows", Status{State: DisabledByUser}, "Task Manager"},
		{"darwin", Status{State: DisabledByUser}, "Login Items"},
		{"linux", Status{State: Enabled, Target: "/old/routinely"}, "points it at this one"},
		{"linux", Status{State: Enabled, Target: "/x", PointsHere: true}, ""},
		{"windows", Status{State: Disabled}, ""},
		{"plan9", Status{State: Unsupported}, ""},
	} {
		got := hintFor(tc.goos, tc.st)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("hintFor(%s, %+v) = %q, want it to contain %q", tc.goos, tc.st, got, tc.want)
		}
	}
}
