//go:build !nogui

package desktop

import (
	"testing"

	"github.com/BurntSushi/toml"
)

// The id the app registers with (app.NewWithID) must be FyneApp.toml's: `fyne package` writes
// it into the .desktop entry and notifications are grouped under it.
func TestAppIDMatchesFyneAppToml(t *testing.T) {
	var meta struct {
		Details struct{ ID string }
	}
	if _, err := toml.DecodeFile("../../FyneApp.toml", &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Details.ID == "" || meta.Details.ID != appID {
		t.Errorf("FyneApp.toml ID %q, app.NewWithID uses %q", meta.Details.ID, appID)
	}
}
