package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"github.com/jonboulle/clockwork"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/journal"
)

// hubState: this device (desktop) and the laptop are connected, the studio's liveness lapsed
// 4 minutes ago; nothing is wrong.
func hubState() *hub.State {
	return &hub.State{PID: 4242, URL: "nats://192.168.1.5:4222", Device: "desktop", Connected: true,
		Devices: []hub.DeviceState{
			{Name: "desktop", Self: true, Alive: true, LastSeen: fixtureNow},
			{Name: "laptop", Alive: true, LastSeen: fixtureNow.Add(-time.Second)},
			{Name: "studio", LastSeen: fixtureNow.Add(-4 * time.Minute)},
		},
		Drift: []hub.Drift{}, UpdatedAt: fixtureNow}
}

// hubWindowState is the standby fixture with a hub: the briefing's last run was the laptop's, the
// page watch's this device's.
func hubWindowState() session.State {
	s := standbyState()
	s.Hub = hubState()
	s.Routines[0].Last.Device = "laptop"
	s.Routines[1].Last.Device = "desktop"
	return s
}

func lastBottom(s session.State, name string) string {
	for _, r := range s.Routines {
		if r.Name == name {
			return RoutineCells(r, s.Now, thisDevice(s))[colLast].Bottom
		}
	}
	return ""
}

// With a hub the window says which device ran each run (the routines' last run when it was
// another device, a Device column in the history that still fits the window), which devices
// are connected, and nothing in the banner while all is well.
func TestWindowShowsTheDevicesOfAHub(t *testing.T) {
	test.NewTempApp(t)
	v := NewMainView(&recorder{})
	s := hubWindowState()
	v.Update(s)

	if got := lastBottom(s, "morning-briefing"); !strings.HasSuffix(got, " · on laptop") {
		t.Errorf("the laptop's run reads %q, want it to say on laptop", got)
	}
	if got := lastBottom(s, "page-watch"); strings.Contains(got, " on ") {
		t.Errorf("this device's run reads %q, want no device", got)
	}
	skipped := *s.Routines[0].Last
	skipped.Outcome, skipped.Reason = journal.OutcomeSkipped, "claimed by laptop"
	s.Routines[0].Last = &skipped
	if got := lastBottom(s, "morning-briefing"); strings.Count(got, "laptop") != 1 {
		t.Errorf("a slot skipped for the laptop reads %q, want the laptop named once", got)
	}

	want := "Devices: desktop (this one), laptop · studio last seen 4m ago"
	if got := v.Owner.devices.Text; got != want || !v.Owner.devices.Visible() {
		t.Errorf("owner panel devices %q (shown %t), want %q", got, v.Owner.devices.Visible(), want)
	}
	s.Now = fixtureNow.Add(30 * time.Second)
	s.Hub.Connected = false
	s.Hub.Devices[0].Alive = false
	s.Hub.Devices[1].Alive, s.Hub.Devices[1].LastSeen = false, time.Time{}
	if got := DevicesText(s); got != "Devices: none connected · desktop (this one) last seen 30s ago · laptop not connected · studio last seen 4m ago" {
		t.Errorf("disconnected: %q", got)
	}

	h := v.History
	if h.columns() != numHCols || hcolTitles[hcolDevice] != "Device" {
		t.Fatalf("history shows %d columns with a hub, want %d with Device", h.columns(), numHCols)
	}
	run := *s.Routines[0].Last
	if got, _ := HistoryCell(run, hcolDevice, fixtureNow); got != "laptop" {
		t.Errorf("history device cell %q, want laptop", got)
	}
	h.Resize(fyne.NewSize(744, 400))
	total := float32(numHCols) * theme.Padding()
	for c := range numHCols {
		if h.widths[c] < hcolMin[c] {
			t.Errorf("column %s is %.0f px, under its least %.0f", hcolTitles[c], h.widths[c], hcolMin[c])
		}
		total += h.widths[c]
	}
	if total > 744 {
		t.Errorf("history columns with Device take %.0f px of 744", total)
	}
	if v.Banner.Visible() || len(hubLines(hubWindowState())) != 0 {
		t.Error("a connected hub with no drift shows the banner or the warning look")
	}
}

// Without a hub the window is as it was: no devices line, no Device column, no device named in
// a routine's last run (even one a hub once recorded), no hub banner.
func TestWindowWithoutAHubShowsNoDevices(t *testing.T) {
	test.NewTempApp(t)
	v := NewMainView(&recorder{})
	s := hubWindowState()
	v.Update(s) // a hub first, then none: what it showed goes away
	s.Hub = nil
	v.Update(s)
	if v.Owner.devices.Visible() || DevicesText(s) != "" {
		t.Errorf("devices line %q shown %t without a hub", v.Owner.devices.Text, v.Owner.devices.Visible())
	}
	if got := lastBottom(s, "morning-briefing"); strings.Contains(got, "laptop") {
		t.Errorf("last run %q names a device without a hub", got)
	}
	if n := v.History.columns(); n != numHCols-1 {
		t.Errorf("history shows %d columns without a hub, want %d", n, numHCols-1)
	}
	if v.Banner.Visible() || BannerText(s) != "" {
		t.Errorf("banner %q without a hub", BannerText(s))
	}
	var total float32
	v.History.Resize(fyne.NewSize(744, 400))
	for c := range numHCols - 1 {
		total += v.History.widths[c]
	}
	if want := (744 - float32(numHCols-1)*theme.Padding()); total < want-1 {
		t.Errorf("without a hub the columns take %.0f px of the %.0f they have", total, want)
	}
}

// The banner says, in one sentence each, that the hub cannot be reached (since when, the error's
// first line, what to do) and that a routine is defined differently on another device; the tray
// shows its warning look.
func TestWedgeBannerShowsHubProblems(t *testing.T) {
	test.NewTempApp(t)
	b := NewWedgeBanner(&recorder{}, nil)
	s := hubWindowState()
	s.Routines[1].Last.Outcome = journal.OutcomeSuccess // no failing routine: the look is the hub's
	if LookFor(s) == LookWarning {
		t.Fatal("the warning look with nothing wrong")
	}
	s.Hub.Connected, s.Hub.Since = false, *at(9, 12, 5)
	s.Hub.Error = "nats: no servers available for connection\n(retrying)"
	b.Update(s)
	want := "This device has not reached the hub at nats://192.168.1.5:4222 since 09:12:05 (nats: no servers available for connection), " +
		"so routines shared with your other devices do not run here until it is back: check that the hub is running and that this device is online."
	if got := BannerText(s); got != want {
		t.Errorf("hub unreachable:\n got %q\nwant %q", got, want)
	}
	if !b.Visible() || b.end.Visible() {
		t.Errorf("banner shown %t, button shown %t; want the banner, no button", b.Visible(), b.end.Visible())
	}
	if LookFor(s) != LookWarning {
		t.Error("an unreachable hub does not show the warning look")
	}
	// With [hub] offline = "local" the shared routines do run here, alone: the banner says so.
	s.Hub.OfflineLocal = true
	want = "This device has not reached the hub at nats://192.168.1.5:4222 since 09:12:05 (nats: no servers available for connection), " +
		`so this device runs the routines shared with your other devices alone ([hub] offline = "local"), and another device may run them too: ` +
		"check that the hub is running and that this device is online."
	if got := BannerText(s); got != want {
		t.Errorf("hub unreachable, offline = local:\n got %q\nwant %q", got, want)
	}
	s.Hub.OfflineLocal = false

	s.Hub.Connected, s.Hub.Since, s.Hub.Error = true, time.Time{}, ""
	s.Hub.Drift = []hub.Drift{{Routine: "morning-briefing", Devices: []string{"laptop", "studio"}}}
	b.Update(s)
	want = `The routine "morning-briefing" is defined differently on laptop, studio than here, so it runs under one name with different definitions: make it the same in routines.toml on every device.`
	if got := BannerText(s); got != want || !b.Visible() {
		t.Errorf("drift (shown %t):\n got %q\nwant %q", b.Visible(), got, want)
	}
	if LookFor(s) != LookWarning {
		t.Error("config drift does not show the warning look")
	}
	s.Hub.Drift = nil
	b.Update(s)
	if b.Visible() {
		t.Error("the banner stayed after the drift was resolved")
	}
}

// An owner diagnosis is notified with the banner's sentence, not the raw message with its
// command-line advice; a diagnosis the banner does not show is not notified.
func TestDiagnosisNotificationIsTheBannerSentence(t *testing.T) {
	test.NewTempApp(t)
	clock := clockwork.NewFakeClockAt(fixtureNow)
	log := &alertLog{}
	p := NewTrayPresenter(&trayHost{}, &recorder{}, log, nil)
	s := standbyState()
	s.Owner.Diagnoses = []ownership.Diagnosis{
		{Kind: ownership.DiagNotHeartbeating, Since: *at(9, 29, 0),
			Message: "the owner (pid 4242) is running but has not written a heartbeat for 41s (suspended or wedged); `routinely daemon --takeover --kill-wedged` can end it"},
		{Kind: ownership.DiagRecordUnreadable, Message: "owner.json: unexpected end of JSON input"},
	}
	s.Stuck = &session.StuckOwner{PID: 4242, Role: ownership.RoleDaemon, Since: *at(9, 29, 0)}
	p.Apply(s)
	clock.Advance(DiagnosisPersist)
	s.Now = clock.Now()
	p.Apply(s)
	expectLines(t, log, "sent 1: Routinely: owner needs attention")
	got := log.alerts[0]
	if got.Body != BannerText(s) || !got.Warning {
		t.Errorf("notification body %q (warning %t), want the banner's sentence %q", got.Body, got.Warning, BannerText(s))
	}
	if strings.Contains(got.Body, "`") || strings.Contains(got.Body, "routinely ") || strings.Count(got.Body, ".") != 1 {
		t.Errorf("notification body %q: want one sentence and no command line", got.Body)
	}
}
