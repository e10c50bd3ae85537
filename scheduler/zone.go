package scheduler

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// The system time zone. Routines without a `timezone` follow it, re-read on
// change, but Go reads it once into time.Local at start, so it is loaded here from
// /etc/localtime and re-read by the wake watcher (zonewatch.go). On Windows there is no
// /etc/localtime: the zone stays time.Local as read at start, named "Local".

// zone is a time zone and the name shown for it (an IANA name when known, else "Local").
type zone struct {
	name string
	loc  *time.Location
}

// zoneSource reports the current system zone. It returns the same *time.Location while the
// zone is unchanged, so a change is a pointer comparison. Errors: the zone could not be read
// (callers keep the zone they have).
type zoneSource interface {
	Zone() (zone, error)
}

// localZone is the zone of time.Local as this process started with it.
var localZone = zone{name: "Local", loc: time.Local}

// fileZones reads the system zone from a tzfile such as /etc/localtime: by the IANA name its
// symbolic link points to, or by its contents when it is a plain copy. $TZ, when set, fixes the
// zone for the life of the process (Go honours it over the file), so the file is then ignored.
type fileZones struct {
	path string

	mu     sync.Mutex
	target string // link target of the last zone read ("" for a plain file)
	data   []byte // contents of the last plain file read
	cur    zone
}

// systemZones is the system zone of this machine.
var systemZones zoneSource = &fileZones{path: "/etc/localtime"}

// Zone returns the system zone. On Windows, and when the file is missing, it gives
// localZone. Errors: the file exists but cannot be read or parsed, wrapped.
func (f *fileZones) Zone() (zone, error) {
	if runtime.GOOS == "windows" {
		// Go reads the Windows zone from the registry once, and ignores $TZ: keep it.
		return localZone, nil
	}
	if tz, ok := os.LookupEnv("TZ"); ok {
		name := zoneNameOf(tz)
		if name == "" {
			name = "Local"
		}
		return zone{name: name, loc: time.Local}, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if target, err := os.Readlink(f.path); err == nil {
		if target == f.target && f.cur.loc != nil {
			return f.cur, nil
		}
		if name := zoneNameOf(target); name != "" {
			if loc, err := time.LoadLocation(name); err == nil {
				f.target, f.data, f.cur = target, nil, zone{name: name, loc: loc}
				return f.cur, nil
			}
		}
		// A link to a file outside a zoneinfo tree: read it like a copy below.
	}
	data, err := os.ReadFile(f.path)
	if os.IsNotExist(err) {
		return localZone, nil
	}
	if err != nil {
		return zone{}, fmt.Errorf("system time zone %s: %w", f.path, err)
	}
	if f.target == "" && f.cur.loc != nil && bytes.Equal(data, f.data) {
		return f.cur, nil
	}
	loc, err := time.LoadLocationFromTZData("Local", data)
	if err != nil {
		return zone{}, fmt.Errorf("system time zone %s: %w", f.path, err)
	}
	f.target, f.data, f.cur = "", data, zone{name: "Local", loc: loc}
	return f.cur, nil
}

// zoneNameOf returns the IANA name in a zone file path or $TZ value
// ("/usr/share/zoneinfo/Europe/Berlin", ":Europe/Berlin" → "Europe/Berlin"; "" → "UTC"), or
// "" when the path is not inside a zoneinfo tree.
func zoneNameOf(s string) string {
	s = strings.TrimPrefix(s, ":")
	if s == "" {
		return "UTC"
	}
	if i := strings.LastIndex(s, "zoneinfo/"); i >= 0 {
		return s[i+len("zoneinfo/"):]
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") {
		return ""
	}
	return s
}

// currentSystemZone is the system zone from src, or localZone when it cannot be read (the
// routine then runs in the zone the process started with, as Go would).
func currentSystemZone(src zoneSource) zone {
	z, err := src.Zone()
	if err != nil || z.loc == nil {
		return localZone
	}
	return z
}
