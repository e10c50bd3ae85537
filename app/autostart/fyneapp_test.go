package autostart

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"
)

// FyneApp.toml is what `fyne package` names the app with; the login items use AppID. If they
// disagree, the packaged .desktop file, icon and the autostart entry describe different apps.
func TestFyneAppMetadataMatchesAppID(t *testing.T) {
	root := filepath.Join("..", "..")
	var meta struct {
		Details struct {
			Icon, Name, ID, Version string
			Build                   int
		}
		LinuxAndBSD struct {
			Categories, Keywords []string
			Comment              string
		}
	}
	_, err := toml.DecodeFile(filepath.Join(root, "FyneApp.toml"), &meta)
	if err != nil {
		t.Fatal(err)
	}
	d := meta.Details
	if d.ID != AppID {
		t.Errorf("FyneApp.toml ID = %q, want autostart.AppID %q", d.ID, AppID)
	}
	if d.Name == "" || d.Version == "" || d.Build < 1 {
		t.Errorf("incomplete [Details]: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(root, d.Icon)); err != nil {
		t.Errorf("[Details] Icon: %v", err)
	}
	l := meta.LinuxAndBSD
	if len(l.Categories) == 0 || len(l.Keywords) == 0 || l.Comment == "" {
		t.Errorf("incomplete [LinuxAndBSD]: %+v", l)
	}
}
