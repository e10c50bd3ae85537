package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routinely/routinely/scheduler/action"
)

const goodConfig = `[defaults]
timezone = "Europe/Berlin"
timeout = "2m"

[[routine]]
name = "morning-briefing"
cron = "0 8 * * MON-FRI"
run = ["/usr/bin/true", "x"]
dir = "~"
env = { GREETING = "hi" }

[[routine]]
name = "heartbeat"
every = "30m"
ping = { url = "https://hc.example/ping", method = "POST" }
retries = 2
notify_on = ["failure"]

[[routine]]
name = "evening"
at = ["18:30", "07:05"]
days = ["mon", "fri"]
timezone = "America/New_York"
notify = { title = "Evening", body = "wind down" }
overlap = "queue"
catch_up = "skip"
`

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "routines.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfigGood(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Problems) != 0 || len(cfg.Routines) != 3 {
		t.Fatalf("problems %v, routines %d", cfg.Problems, len(cfg.Routines))
	}
	mb := cfg.Routine("morning-briefing")
	if mb.Kind != KindCron || mb.Timezone != "Europe/Berlin" || mb.Timeout != 2*time.Minute ||
		mb.Overlap != OverlapSkip || mb.CatchUp != CatchUpOnce || mb.CatchUpWindow != 12*time.Hour ||
		mb.Env["GREETING"] != "hi" || mb.Line != 5 {
		t.Fatalf("morning-briefing: %+v", mb)
	}
	if spec, ok := mb.Spec.(action.RunSpec); !ok || spec.Argv[1] != "x" {
		t.Fatalf("spec %#v", mb.Spec)
	}
	hb := cfg.Routine("heartbeat")
	if hb.Every != 30*time.Minute || hb.Retries != 2 || hb.Spec.(action.PingSpec).Method != "POST" {
		t.Fatalf("heartbeat: %+v", hb)
	}
	ev := cfg.Routine("evening")
	if ev.Timezone != "America/New_York" || len(ev.Days) != 2 || ev.Overlap != OverlapQueue || ev.CatchUp != CatchUpSkip {
		t.Fatalf("evening: %+v", ev)
	}
	// Tuesday 2026-06-02 12:00 NY: next slots are Fri 07:05, Fri 18:30, Mon 07:05.
	var got []time.Time
	slots := ev.Slots(time.Time{})
	for at := time.Date(2026, 6, 2, 12, 0, 0, 0, ev.Location); len(got) < 3; {
		at = slots.Next(at)
		got = append(got, at.In(ev.Location))
	}
	want := []string{"2026-06-05T07:05:00-04:00", "2026-06-05T18:30:00-04:00", "2026-06-08T07:05:00-04:00"}
	for i := range want {
		if got[i].Format(time.RFC3339) != want[i] {
			t.Fatalf("preview %d = %s, want %s", i, got[i].Format(time.RFC3339), want[i])
		}
	}
}

func TestLoadConfigProblemsAtPositions(t *testing.T) {
	body := `[[routine]]
name = "ok"
every = "1m"
shell = "echo ok"

[[routine]]
name = "two-kinds"
cron = "* * * * *"
every = "1m"
shell = "true"

[[routine]]
name = "bad-cron"
cron = "61 * * * *"
shell = "true"

[[routine]]
name = "bad-zone"
every = "1m"
timezone = "Mars/Olympus"
shell = "true"

[[routine]]
name = "ok"
every = "1m"
shell = "true"

[[routine]]
name = "neg"
every = "1m"
timeout = "-5s"
shell = "true"
bogus = 1

[[routine]]
name = "watcher"
every = "1m"
watch = { url = "ftp://x", selector = "" }
`
	cfg, err := LoadConfig(writeConfig(t, body))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Routines) != 1 || cfg.Routines[0].Name != "ok" {
		t.Fatalf("valid routines: %v", cfg.Routines)
	}
	want := []string{
		":9:1: routine has two schedule kinds",
		":14:1: cron \"61 * * * *\"",
		":20:1: unknown time zone \"Mars/Olympus\"",
		":24:1: duplicate routine name \"ok\"",
		":33:1: unknown key \"bogus\"",
		":31:1: timeout must be positive",
		":38:11: watch:",
	}
	var all []string
	for _, p := range cfg.Problems {
		all = append(all, p.String())
	}
	joined := strings.Join(all, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("missing problem %q in:\n%s", w, joined)
		}
	}
	for _, p := range cfg.Problems {
		if !strings.HasPrefix(p.String(), cfg.Path+":") {
			t.Errorf("problem not at file position: %s", p)
		}
	}
}

func TestLoadConfigSyntaxErrorHasPosition(t *testing.T) {
	_, err := LoadConfig(writeConfig(t, "[[routine]]\nname = \"x\"\nevery = \n"))
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v, want ErrConfig", err)
	}
	if !strings.Contains(err.Error(), "routines.toml:3:") {
		t.Fatalf("err %q lacks routines.toml:3:COL", err)
	}
}

func TestDescribeEvery(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "every 1m", 30 * time.Second: "every 30s", 90 * time.Minute: "every 1h30m",
		time.Hour: "every 1h", 36*time.Hour + time.Second: "every 36h0m1s", 1500 * time.Millisecond: "every 1.5s",
	} {
		if got := (&Routine{Kind: KindEvery, Every: d}).Describe(); got != want {
			t.Errorf("Describe(every %v) = %q, want %q", d, got, want)
		}
	}
}

func TestLoadConfigOnDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadConfig(dir)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "is a directory") || strings.Contains(err.Error(), ":0:0") {
		t.Fatalf("LoadConfig(dir) = %v", err)
	}
}

// Days are listed Monday first, and three or more in a row as a range, so a schedule reads
// short: "at 08:30 Mon–Fri", not "at 08:30 Mon,Tue,Wed,Thu,Fri".
func TestDescribeDays(t *testing.T) {
	for _, c := range []struct {
		days []time.Weekday
		want string
	}{
		{[]time.Weekday{time.Friday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday}, "at 08:30 Mon–Fri"},
		{[]time.Weekday{time.Monday, time.Wednesday}, "at 08:30 Mon,Wed"},
		{[]time.Weekday{time.Sunday, time.Saturday}, "at 08:30 Sat,Sun"},
		{[]time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Friday, time.Sunday}, "at 08:30 Mon–Wed,Fri,Sun"},
		{nil, "at 08:30"},
	} {
		r := &Routine{Kind: KindAt, At: []string{"08:30"}, Days: c.days}
		if got := r.Describe(); got != c.want {
			t.Errorf("days %v: %q, want %q", c.days, got, c.want)
		}
	}
}

// A Snapshot rebuilds the Config it came from, distrust included: the run and shell routines of
// a file another user could change stay disabled when the last good version is used.
func TestSnapshotKeepsTheDistrust(t *testing.T) {
	data := []byte("[[routine]]\nname = \"cmd\"\nevery = \"1m\"\nrun = [\"true\"]\n\n[[routine]]\nname = \"hello\"\nevery = \"1m\"\nnotify = { title = \"hi\" }\n")
	cfg, err := FromSnapshot(Snapshot{Path: "/x/routines.toml", Data: data, DistrustWhy: "the file is writable by its group", DistrustFix: "chmod 600 /x/routines.toml"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Routines) != 1 || cfg.Routines[0].Name != "hello" || len(cfg.Problems) != 1 ||
		!strings.Contains(cfg.Problems[0].Message, "chmod 600") {
		t.Fatalf("distrusted snapshot: routines %v, problems %v; want cmd disabled with the fix", cfg.Routines, cfg.Problems)
	}
	again, err := FromSnapshot(cfg.Snapshot())
	if err != nil || len(again.Routines) != 1 {
		t.Fatalf("round trip: %v, %v", again, err)
	}
	dir := t.TempDir()
	path := dir + "/routines.toml"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadConfig(path)
	if err != nil || string(loaded.Snapshot().Data) != string(data) || loaded.Snapshot().Path != path || loaded.Snapshot().DistrustWhy != "" {
		t.Fatalf("LoadConfig snapshot: %+v, %v", loaded.Snapshot(), err)
	}
}
