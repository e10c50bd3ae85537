package action

import (
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recordingNotifier is a Notifier that keeps what it was asked to show.
type recordingNotifier struct {
	mu   sync.Mutex
	sent []notification
	err  error
}

type notification struct{ title, body string }

func (r *recordingNotifier) Notify(title, body string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.sent = append(r.sent, notification{title, body})
	return nil
}

func (r *recordingNotifier) all() []notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notification(nil), r.sent...)
}

// memSnapshots is an in-memory SnapshotStore (the journal implements the real one).
type memSnapshots struct {
	mu       sync.Mutex
	byName   map[string][]string
	lastKeep int
	err      error
}

func newMemSnapshots() *memSnapshots { return &memSnapshots{byName: map[string][]string{}} }

func (m *memSnapshots) LastSnapshot(routine string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return "", false, m.err
	}
	s := m.byName[routine]
	if len(s) == 0 {
		return "", false, nil
	}
	return s[len(s)-1], true, nil
}

func (m *memSnapshots) SaveSnapshot(routine, text string, keep int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	s := append(m.byName[routine], text)
	if len(s) > keep {
		s = s[len(s)-keep:]
	}
	m.byName[routine] = s
	m.lastKeep = keep
	return nil
}

func (m *memSnapshots) count(routine string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byName[routine])
}

// deliver passes res through alerts and shows what it decides, as the engine does.
func deliver(t *testing.T, alerts *Alerts, n Notifier, routine string, res Result) {
	t.Helper()
	if title, body, send := alerts.Observe(routine, res); send {
		if err := n.Notify(title, body); err != nil {
			t.Fatalf("notify: %v", err)
		}
	}
}
