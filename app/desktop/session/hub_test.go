package session

import (
	"os"
	"path/filepath"
	"testing"

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
