package autostart

import (
	"strings"
	"testing"
)

func TestHint(t *testing.T) {
	const enable = "build/routinely --home /srv/p autostart enable"
	for _, tc := range []struct {
		goos   string
		st     Status
		enable string
		want   string // substring; "" means no hint
	}{
		{"linux", Status{State: DisabledByUser}, enable, "Hidden=true"},
		{"linux", Status{State: DisabledByUser}, enable, "'" + enable + "' turns it back on"},
		{"windows", Status{State: DisabledByUser}, enable, "Task Manager"},
		{"darwin", Status{State: DisabledByUser}, enable, "Login Items"},
		{"linux", Status{State: Enabled, Target: "/old/routinely"}, enable, "'" + enable + "' points it at this one"},
		{"linux", Status{State: Enabled, Target: "/old/routinely"}, "", "starts another binary or profile."},
		{"linux", Status{State: Enabled, Target: "/x", PointsHere: true}, enable, ""},
		{"windows", Status{State: Disabled}, enable, ""},
		{"plan9", Status{State: Unsupported}, enable, ""},
	} {
		got := hintFor(tc.goos, tc.st, tc.enable)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("hintFor(%s, %+v, %q) = %q, want it to contain %q", tc.goos, tc.st, tc.enable, got, tc.want)
		}
		if strings.Contains(got, "'routinely autostart enable'") {
			t.Errorf("hintFor(%s, %+v) names a command that may not be this binary's: %q", tc.goos, tc.st, got)
		}
		if tc.enable == "" && strings.Contains(got, "'") {
			t.Errorf("hintFor with no enable command names one: %q", got)
		}
	}
}
