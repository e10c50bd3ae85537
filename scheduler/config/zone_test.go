package config

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// fileZones follows /etc/localtime's link and, for a plain copy, its contents; it returns the
// same *time.Location while nothing changed, and time.Local when there is no file (Windows).
func TestFileZones(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /etc/localtime on Windows: the zone stays time.Local")
	}
	if _, ok := os.LookupEnv("TZ"); ok {
		t.Skip("TZ is set: the system zone is fixed for the process")
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "localtime")
	f := &FileZones{Path: link}
	if z, err := f.Zone(); err != nil || z != LocalZone {
		t.Fatalf("missing file: %v %v, want Local", z, err)
	}
	relink := func(name string) {
		_ = os.Remove(link)
		if err := os.Symlink("/usr/share/zoneinfo/"+name, link); err != nil {
			t.Fatal(err)
		}
	}
	relink("Etc/UTC")
	utc, err := f.Zone()
	if err != nil || utc.Name != "Etc/UTC" {
		t.Fatalf("link: %+v %v", utc, err)
	}
	relink("Europe/Berlin")
	berlin, err := f.Zone()
	if err != nil || berlin.Name != "Europe/Berlin" || berlin.Loc == utc.Loc {
		t.Fatalf("relinked: %+v %v", berlin, err)
	}
	if again, _ := f.Zone(); again.Loc != berlin.Loc {
		t.Fatal("unchanged link: a new *time.Location")
	}
	data, err := os.ReadFile("/usr/share/zoneinfo/Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	_ = os.Remove(link)
	if err := os.WriteFile(link, data, 0o644); err != nil {
		t.Fatal(err)
	}
	copied, err := f.Zone()
	_, off := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).In(copied.Loc).Zone()
	if err != nil || copied.Name != "Local" || off != 2*3600 {
		t.Fatalf("copy: %+v %v offset %d", copied, err, off)
	}
	if again, _ := f.Zone(); again.Loc != copied.Loc {
		t.Fatal("unchanged copy: a new *time.Location")
	}
}
