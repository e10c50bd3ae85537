package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/routinely/routinely/internal/atomicfile"
	"github.com/routinely/routinely/ownership"
)

// settingsFile is the desktop app's own settings, beside owner.json in the state directory.
const settingsFile = "desktop-settings.json"

// maxSettingsFile bounds the read of the settings: they take a few dozen bytes.
const maxSettingsFile = 64 << 10

// Settings are the desktop app's preferences that outlive a run.
type Settings struct {
	TakeoverPolicy ownership.Policy `json:"takeover_policy"`
}

// LoadSettings reads the settings of state directory dir; a missing file gives the defaults
// (ask before any takeover).
func LoadSettings(dir string) (Settings, error) {
	s := Settings{TakeoverPolicy: ownership.PolicyAsk}
	// Bounded and never blocking on a named pipe, like every state file (atomicfile.Read).
	b, _, err := atomicfile.Read(filepath.Join(dir, settingsFile), maxSettingsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read desktop settings: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{TakeoverPolicy: ownership.PolicyAsk}, fmt.Errorf("parse %s: %w", settingsFile, err)
	}
	switch s.TakeoverPolicy {
	case ownership.PolicyAsk, ownership.PolicyAllow, ownership.PolicyDeny:
	default:
		s.TakeoverPolicy = ownership.PolicyAsk
	}
	return s, nil
}

// SaveSettings writes s atomically (atomicfile.Write) so a crash never leaves half a file.
// Errors: encoding or writing, wrapped.
func SaveSettings(dir string, s Settings) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode desktop settings: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, settingsFile), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("save desktop settings: %w", err)
	}
	return nil
}
