package session

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/hub/hubserver"
	"github.com/routinely/routinely/ownership"
)

// The snapshot carries the live owner's hub.json, and only the live owner's.
func TestOwnersHub(t *testing.T) {
	dir := t.TempDir()
	owner := ownership.Status{Held: true, Record: &ownership.Record{PID: 4242}}
	if got := ownersHub(dir, owner); got != nil {
		t.Fatalf("no hub.json: %+v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "hub.json"), []byte(`{"pid": 4242, "device": "laptop", "connected": true,
		"devices": [{"name": "laptop", "self": true, "alive": true}, {"name": "desktop", "alive": false}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got := ownersHub(dir, owner)
	if got == nil || got.Device != "laptop" || !got.Connected || len(got.Devices) != 2 || got.Devices[1].Alive {
		t.Fatalf("hub: %+v", got)
	}
	if got := ownersHub(dir, ownership.Status{Held: true, Record: &ownership.Record{PID: 1}}); got != nil {
		t.Fatalf("another owner's hub.json: %+v", got)
	}
	if got := ownersHub(dir, ownership.Status{}); got != nil {
		t.Fatalf("no owner: %+v", got)
	}
}

// While the app owns with a [hub], what its hub client sees reaches the published state when it
// changes, not at the owning tick: connected once the hub answers, not connected once it is gone.
func TestAnOwningAppPublishesHubChangesAtOnce(t *testing.T) {
	srv, err := hubserver.Start(context.Background(), hubserver.Options{Listen: "127.0.0.1:0",
		Store: filepath.Join(t.TempDir(), "hub"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	p, err := paths.Resolve(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf("[hub]\nurl = %q\ntoken = %q\ndevice = \"laptop\"\nliveness_ttl = \"2s\"\n\n"+
		"[[routine]]\nname = \"quiet\"\nevery = \"1h\"\nrun = [\"true\"]\n", srv.URL, srv.Token)
	if err := os.WriteFile(p.Config, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	var pubs publishes
	newSessionAt(t, p, func(o *Options) { o.Tick, o.OwningTick, o.Publish = 50*time.Millisecond, time.Hour, pubs.publish })
	waitPublished := func(what string, cond func(State) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for _, st := pubs.get(); !cond(st); _, st = pubs.get() {
			if time.Now().After(deadline) {
				t.Fatalf("not published within 10 s: %s (last hub: %+v)", what, st.Hub)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitPublished("the app owning, connected to the hub", func(st State) bool {
		return ownsOne(st) && st.Hub != nil && st.Hub.Connected
	})
	srv.Shutdown()
	waitPublished("the hub gone", func(st State) bool { return st.Hub != nil && !st.Hub.Connected })
}
