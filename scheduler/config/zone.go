package config

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
// /etc/localtime and re-read by the engine's wake watcher. On Windows there is no
// /etc/localtime: the zone stays time.Local as read at start, named "Local".

// Zone is a time zone and the name shown for it (an IANA name when known, else "Local").
type Zone struct {
	Name string
	Loc  *time.Location
}

// ZoneSource reports the current system zone. It returns the same *time.Location while the
// zone is unchanged, so a change is a pointer comparison. Errors: the zone could not be read
// (callers keep the zone they have).
type ZoneSource interface {
	Zone() (Zone, error)
}

// LocalZone is the zone of time.Local as this process started with it.
var LocalZone = Zone{Name: "Local", Loc: time.Local}

// FileZones reads the system zone from a tzfile such as /etc/localtime: by the IANA name its
// symbolic link points to, or by its contents when it is a plain copy. $TZ, when set, fixes the
// zone for the life of the process (Go honours it over the file), so the file is then ignored.
type FileZones struct {
	Path string // the tzfile, /etc/localtime on this machine

	mu     sync.Mutex
	target string // link target of the last zone read ("" for a plain file)
	data   []byte // contents of the last plain file read
	cur    Zone
}

// SystemZones is the system zone of this machine.
var SystemZones ZoneSource = &FileZones{Path: "/etc/localtime"}

// Zone returns the system zone. On Windows, and when the file is missing, it gives
// LocalZone. Errors: the file exists but cannot be read or parsed, wrapped.
func (f *FileZones) Zone() (Zone, error) {
	if runtime.GOOS == "windows" {
		// Go reads the Windows zone from the registry once, and ignores $TZ: keep it.
		return LocalZone, nil
	}
	if tz, ok := os.LookupEnv("TZ"); ok {
		name := zoneNameOf(tz)
		if name == "" {
			name = "Local"
		}
		return Zone{Name: name, Loc: time.Local}, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if target, err := os.Readlink(f.Path); err == nil {
		if target == f.target && f.cur.Loc != nil {
			return f.cur, nil
		}
		if name := zoneNameOf(target); name != "" {
			if loc, err := time.LoadLocation(name); err == nil {
				f.target, f.data, f.cur = target, nil, Zone{Name: name, Loc: loc}
				return f.cur, nil
			}
		}
		// A link to a file outside a zoneinfo tree: read it like a copy below.
	}
	data, err := os.ReadFile(f.Path)
	if os.IsNotExist(err) {
		return LocalZone, nil
	}
	if err != nil {
		return Zone{}, fmt.Errorf("system time zone %s: %w", f.Path, err)
	}
	if f.target == "" && f.cur.Loc != nil && bytes.Equal(data, f.data) {
		return f.cur, nil
	}
	loc, err := time.LoadLocationFromTZData("Local", data)
	if err != nil {
		return Zone{}, fmt.Errorf("system time zone %s: %w", f.Path, err)
	}
	f.target, f.data, f.cur = "", data, Zone{Name: "Local", Loc: loc}
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

// CurrentSystemZone is the system zone from src, or LocalZone when it cannot be read (the
// routine then runs in the zone the process started with, as Go would).
func CurrentSystemZone(src ZoneSource) Zone {
	z, err := src.Zone()
	if err != nil || z.Loc == nil {
		return LocalZone
	}
	return z
}

// InZone returns c with its system-zone routines (no timezone key, or "Local") in z. A routine
// whose zone differs is copied, with its calendar schedule recompiled for z (a running engine's
// routines are read by runs in flight, so they are never modified); the others are shared.
func (c *Config) InZone(z Zone) *Config {
	out := *c
	out.Routines = make([]*Routine, len(c.Routines))
	for i, r := range c.Routines {
		if r.systemZone && (r.Location != z.Loc || r.Timezone != z.Name) {
			c := *r
			c.Timezone, c.Location = z.Name, z.Loc
			if cs, ok := r.sched.(*calendarSchedule); ok {
				c.sched = &calendarSchedule{specs: cs.specs, loc: z.Loc}
			}
			r = &c
		}
		out.Routines[i] = r
	}
	return &out
}
