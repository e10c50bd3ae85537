package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/routinely/routinely/ownership"
)

func TestSettingsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := LoadSettings(dir)
	if err != nil || s.TakeoverPolicy != ownership.PolicyAsk {
		t.Fatalf("missing file: %+v, %v; want ask, nil", s, err)
	}
	if err := SaveSettings(dir, Settings{TakeoverPolicy: ownership.PolicyDeny}); err != nil {
		t.Fatal(err)
	}
	if s, err = LoadSettings(dir); err != nil || s.TakeoverPolicy != ownership.PolicyDeny {
		t.Fatalf("after save: %+v, %v; want deny", s, err)
	}
	if err := os.WriteFile(filepath.Join(dir, settingsFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err = LoadSettings(dir); err == nil || s.TakeoverPolicy != ownership.PolicyAsk {
		t.Fatalf("corrupt file: %+v, %v; want ask and an error", s, err)
	}
}
