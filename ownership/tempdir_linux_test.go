package ownership

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// A heartbeat is one event in the state directory, owner.json renamed into place: its temp file
// lives in dir/tmp, so the directory's watchers (takeover requests, journal changes, routines.toml
// under --home) each wake once per beat, not four times.
func TestAHeartbeatIsOneEventInTheStateDirectory(t *testing.T) {
	dir := testDir(t)
	acquireT(t, Options{Dir: dir, HeartbeatInterval: 50 * time.Millisecond})
	time.Sleep(200 * time.Millisecond) // the acquire's own writes (epoch, the durable record)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	var events []fsnotify.Event
	for end := time.After(time.Second); ; {
		select {
		case ev := <-w.Events:
			events = append(events, ev)
			continue
		case err := <-w.Errors:
			t.Fatal(err)
		case <-end:
		}
		break
	}
	beats := 0
	for _, ev := range events {
		switch {
		case filepath.Base(ev.Name) == recordName && ev.Has(fsnotify.Create):
			beats++
		case filepath.Base(ev.Name) == tempDirName:
			// the temp directory's own metadata (its mtime), reported on some kernels
		default:
			t.Errorf("event %v in the state directory, want only owner.json renamed into place", ev)
		}
	}
	if beats < 5 {
		t.Errorf("%d heartbeats seen in 1 s at a 50 ms interval, want at least 5: %v", beats, events)
	}
}
