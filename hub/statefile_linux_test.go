package hub_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/routinely/routinely/hub"
)

// hub.json is written through the state directory's tmp/: its watchers (the owner's takeover
// requests, a standby's) see one event per write, the rename into place.
func TestHubStateIsOneEventInTheStateDirectory(t *testing.T) {
	s := startHub(t, newStore(t), "127.0.0.1:0")
	defer s.Shutdown()
	dir := t.TempDir()
	join(t, s, "laptop", "j-laptop", 1, dir)
	eventually(t, 10*time.Second, "a first hub.json", func() bool {
		_, err := hub.ReadState(dir)
		return err == nil
	})
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	writes := 0
	for end := time.After(2 * time.Second); ; {
		select {
		case ev := <-w.Events:
			switch {
			case filepath.Base(ev.Name) == hub.StateFile && ev.Has(fsnotify.Create):
				writes++
			case filepath.Base(ev.Name) == "tmp":
				// the temp directory's own metadata (its mtime), reported on some kernels
			default:
				t.Errorf("event %v in the state directory, want only hub.json renamed into place", ev)
			}
			continue
		case err := <-w.Errors:
			t.Fatal(err)
		case <-end:
		}
		break
	}
	if writes < 2 { // a write every 0.5 s (liveness_ttl 2 s)
		t.Errorf("%d writes of hub.json seen in 2 s, want at least 2", writes)
	}
}
