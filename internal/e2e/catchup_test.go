//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// After a long stop every routine wants its one catch-up at the same instant. 30 routines
// every 3 s, the owner SIGSTOPped for 10 s (each misses three slots or more) and continued:
// each runs its catch-up exactly once, no slot runs twice, at most max_parallel_catch_up (3)
// catch-ups overlap by their own start and end stamps, and each catch-up's late_by in the
// journal is its real start. A routine without catch-up (catch_up = "skip") keeps running on
// time meanwhile: scheduled runs are not held back by the catch-ups.
//
// The scenario is every 10 s and 60 s stopped; the schedule and the stop are scaled
// down together (every 3 s, 10 s stopped) so that CI spends 25 s, not 80 s, and every routine
// still misses several slots: what the limiter sees after SIGCONT is the same.
func TestCatchUpsAfterAStopRunAFewAtATime(t *testing.T) {
	if testing.Short() {
		t.Skip("25 s of real time")
	}
	const routines, limit = 30, 3
	dir := t.TempDir()
	stamps := filepath.Join(dir, "stamps.txt")
	// Each run writes one line when it ends: routine, trigger, slot, start and end in Unix ns.
	script := fmt.Sprintf(`s=$(date +%%s%%N); sleep 0.4; echo "$ROUTINELY_ROUTINE $ROUTINELY_TRIGGER $ROUTINELY_SLOT $s $(date +%%s%%N)" >> %q`, stamps)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "[defaults]\nmax_parallel_catch_up = %d\ntimeout = \"30s\"\n\n", limit)
	for i := range routines {
		fmt.Fprintf(&cfg, "[[routine]]\nname = \"r%02d\"\nevery = \"3s\"\nshell = '%s'\n\n", i, script)
	}
	fmt.Fprintf(&cfg, "[[routine]]\nname = \"steady\"\nevery = \"1s\"\ncatch_up = \"skip\"\nshell = '%s'\n", strings.Replace(script, "sleep 0.4", "true", 1))
	home := newHome(t, cfg.String())

	owner := start(t, home, "daemon")
	waitOwner(t, home, owner.pid())
	// Stop the owner half-way between two slots, not while it writes the 30 claims of one: a
	// routine whose claim is being written when the owner stops runs that slot once continued,
	// and the slots due meanwhile meet its overlap policy behind that run, so it has no
	// catch-up of its own (TestAStopDuringAClaimIsNotASlowJournal).
	owner.waitStderr("routine=r00 slot=", ownDeadline)
	m := regexp.MustCompile(`routine=r00 slot=(\S+)`).FindStringSubmatch(owner.stderr.String())
	slot, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		t.Fatalf("r00's first slot %q: %v", m[1], err)
	}
	stopAt := slot.Add(3*time.Second + 1500*time.Millisecond) // also half-way between steady's
	for time.Until(stopAt) < time.Second {
		stopAt = stopAt.Add(3 * time.Second)
	}
	time.Sleep(time.Until(stopAt))
	owner.signal(syscall.SIGSTOP)
	stopped := time.Now()
	time.Sleep(10 * time.Second)
	owner.signal(syscall.SIGCONT)
	continued := time.Now()
	time.Sleep(9 * time.Second) // 30 catch-ups of 0.4 s, 3 at a time: about 4 s
	owner.signal(syscall.SIGTERM)
	if code := owner.wait(cmdTimeout); code != 0 {
		t.Fatalf("owner: exit %d on SIGTERM", code)
	}

	type stamp struct {
		routine, trigger, slot string
		start, end             int64
	}
	data, err := os.ReadFile(stamps)
	if err != nil {
		t.Fatal(err)
	}
	var catchUps []stamp
	ran := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 {
			t.Fatalf("stamp line %q", line)
		}
		s := stamp{routine: f[0], trigger: f[1], slot: f[2]}
		s.start, _ = strconv.ParseInt(f[3], 10, 64)
		s.end, _ = strconv.ParseInt(f[4], 10, 64)
		if ran[s.routine+" "+s.slot]++; ran[s.routine+" "+s.slot] > 1 {
			t.Errorf("%s slot %s ran twice", s.routine, s.slot)
		}
		if s.trigger == "catch-up" {
			catchUps = append(catchUps, s)
		}
	}
	per := map[string]int{}
	for _, s := range catchUps {
		per[s.routine]++
	}
	for i := range routines {
		if n := per[fmt.Sprintf("r%02d", i)]; n != 1 {
			t.Errorf("r%02d ran %d catch-ups, want 1", i, n)
		}
	}
	if per["steady"] != 0 {
		t.Errorf("steady (catch_up = skip) ran %d catch-ups", per["steady"])
	}

	// The most catch-ups running at one instant, from their own stamps.
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for _, s := range catchUps {
		edges = append(edges, edge{s.start, +1}, edge{s.end, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at != edges[j].at {
			return edges[i].at < edges[j].at
		}
		return edges[i].delta < edges[j].delta // an end before a start at the same ns
	})
	most, now := 0, 0
	for _, e := range edges {
		now += e.delta
		most = max(most, now)
	}
	if most > limit {
		t.Errorf("%d catch-ups overlapped, want at most max_parallel_catch_up = %d", most, limit)
	}
	t.Logf("at most %d catch-ups overlapped", most)

	// steady ran on time while the catch-ups were queued (they take about 4 s after SIGCONT).
	onTime := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != "steady" || f[1] != "schedule" {
			continue
		}
		slot, _ := time.Parse(time.RFC3339, f[2])
		start, _ := strconv.ParseInt(f[3], 10, 64)
		if slot.After(continued.Add(time.Second)) && slot.Before(continued.Add(4*time.Second)) && time.Unix(0, start).Sub(slot) < time.Second {
			onTime++
		}
	}
	if onTime < 2 {
		t.Errorf("steady ran %d scheduled runs on time in the 3 s after SIGCONT while catch-ups queued, want 2 or more", onTime)
	}

	// The journal's late_by of each catch-up is when it really started, not when it was due.
	stdout, stderr, code := run(t, home, "history", "--json", "--limit", "100000")
	var rows []struct {
		Routine  string    `json:"routine"`
		Slot     time.Time `json:"slot"`
		Trigger  string    `json:"trigger"`
		Outcome  string    `json:"outcome"`
		LateByMS int64     `json:"late_by_ms"`
	}
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || code != 0 {
		t.Fatalf("history --json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	started := map[string]int64{}
	for _, s := range catchUps {
		started[s.routine] = s.start
	}
	journalCatchUps := 0
	for _, r := range rows {
		if r.Trigger != "catch-up" || r.Outcome != "success" {
			continue
		}
		journalCatchUps++
		if r.Slot.Before(stopped) || r.Slot.After(continued) {
			t.Errorf("%s: catch-up of slot %v, outside the stop [%v, %v]", r.Routine, r.Slot, stopped, continued)
		}
		real := time.Unix(0, started[r.Routine]).Sub(r.Slot)
		if d := time.Duration(r.LateByMS)*time.Millisecond - real; d > time.Second || d < -time.Second {
			t.Errorf("%s: late_by %d ms, but it started %v after its slot", r.Routine, r.LateByMS, real.Round(time.Millisecond))
		}
	}
	if journalCatchUps != routines {
		t.Errorf("the journal has %d successful catch-ups, want %d", journalCatchUps, routines)
	}
}

// A catch-up ping right after a stop, while nothing listens yet (the network is "still coming
// up"), keeps trying within network_grace: once a server listens (5 s after SIGCONT) the run
// is recorded success, as one history entry with more than one attempt, and no failure
// notification was sent (the daemon logs every notification).
func TestCatchUpPingWaitsForTheNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("25 s of real time")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there until the server starts below
	home := newHome(t, fmt.Sprintf(`
[[routine]]
name = "hc"
every = "10s"
timeout = "1m"
ping = { url = "http://%s/ping" }
`, addr))

	owner := start(t, home, "daemon")
	waitOwner(t, home, owner.pid())
	// Owning comes before arming: stopped in between, the routine would be armed only once
	// continued, with no slot in the stop to catch up.
	owner.waitStderr("Owning the routines (epoch 1)", ownDeadline)
	owner.signal(syscall.SIGSTOP) // before the first slot, 10 s after arming
	time.Sleep(15 * time.Second)
	owner.signal(syscall.SIGCONT)
	time.Sleep(5 * time.Second)
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	type row struct {
		Trigger  string `json:"trigger"`
		Outcome  string `json:"outcome"`
		Attempts int    `json:"attempts"`
	}
	var catchUp *row
	for deadline := time.Now().Add(30 * time.Second); catchUp == nil && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		stdout, _, code := run(t, home, "history", "hc", "--json")
		var rows []row
		if code != 0 || json.Unmarshal([]byte(stdout), &rows) != nil {
			continue
		}
		for i := range rows {
			if rows[i].Trigger == "catch-up" && rows[i].Outcome != "running" {
				catchUp = &rows[i]
			}
		}
	}
	if catchUp == nil {
		t.Fatal("no finished catch-up run of hc within 30 s of the server starting")
	}
	if catchUp.Outcome != "success" || catchUp.Attempts < 2 {
		t.Errorf("catch-up: %+v; want success after more than one attempt", *catchUp)
	}
	owner.signal(syscall.SIGTERM)
	owner.wait(cmdTimeout)
	if log := owner.stderr.String(); strings.Contains(log, "msg=notification") {
		t.Errorf("a notification was sent while the network came up:\n%s", log)
	}
}
