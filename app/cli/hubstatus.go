package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/internal/redact"
	"github.com/routinely/routinely/ownership"
	"github.com/routinely/routinely/scheduler/config"
)

// hubStale is how old the live owner's hub.json may be before its hub session counts as not
// answering (the session rewrites it about every second).
const hubStale = 30 * time.Second

// jsonHub is "hub" in status --json: what the owner sees of the hub; null without a [hub].
type jsonHub struct {
	URL       string     `json:"url"`
	Device    string     `json:"device"`
	Connected bool       `json:"connected"`
	Since     *time.Time `json:"since"` // not connected: since when
	Error     string     `json:"error"`
	// Refused: the hub refused this device (its token) or this device its certificate; Error
	// says what to do.
	Refused bool `json:"refused"`
	// OfflineLocal: the owner runs with [hub] offline = "local" (shared routines run here alone
	// while it cannot reach the hub).
	OfflineLocal bool            `json:"offline_local"`
	Devices      []jsonHubDevice `json:"devices"`
	Drift        []jsonHubDrift  `json:"drift"`
	// NameClash: the ids of other live devices that use this device's name.
	NameClash []string `json:"name_clash"`
	// Ignored: claim and run keys on the hub that no device of this hub signed ("key: why"),
	// which the owner ignored and claimed over.
	Ignored   []string   `json:"ignored"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// jsonHubDevice is one device seen on the hub.
type jsonHubDevice struct {
	Name     string       `json:"name"`
	Self     bool         `json:"self"`
	Alive    bool         `json:"alive"`
	LastSeen *time.Time   `json:"last_seen"`
	Version  string       `json:"version"`
	Last     *hub.LastRun `json:"last"`
}

// jsonHubDrift is one shared routine that other devices define differently.
type jsonHubDrift struct {
	Routine string   `json:"routine"`
	Devices []string `json:"devices"`
}

// hubStatus returns what status says about the hub of cfg (nil without a [hub]) and the
// hub-unreachable diagnosis, if any: the live owner (st) cannot reach the hub, or its hub
// session has not written hub.json for hubStale. Only the live owner's hub.json counts.
func hubStatus(p paths.Paths, cfg *config.Config, st ownership.Status, now time.Time) (*jsonHub, *jsonDiagnosis) {
	if cfg == nil || cfg.Hub == nil {
		return nil, nil
	}
	out := &jsonHub{URL: redact.URL(cfg.Hub.URL), Device: cfg.Hub.Device, Devices: []jsonHubDevice{}, Drift: []jsonHubDrift{}, NameClash: []string{}, Ignored: []string{}}
	if !st.Held || st.Record == nil {
		return out, nil
	}
	s, err := hub.ReadState(p.State)
	if err != nil || s.PID != st.Record.PID {
		return out, nil // the owner has not written it yet (or runs without the hub: restart it)
	}
	out.Connected, out.Error, out.Since, out.UpdatedAt = s.Connected, s.Error, nonZero(s.Since), nonZero(s.UpdatedAt)
	out.OfflineLocal, out.Refused = s.OfflineLocal, s.Refused
	for _, d := range s.Devices {
		out.Devices = append(out.Devices, jsonHubDevice{Name: d.Name, Self: d.Self, Alive: d.Alive,
			LastSeen: nonZero(d.LastSeen), Version: d.Version, Last: d.Last})
	}
	for _, d := range s.Drift {
		out.Drift = append(out.Drift, jsonHubDrift{Routine: d.Routine, Devices: d.Devices})
	}
	out.NameClash = append(out.NameClash, s.NameClash...)
	out.Ignored = append(out.Ignored, s.Ignored...)
	switch {
	case !s.Connected:
		// Refused (a token or certificate the hub or this device will not take): waiting does
		// not help, and the error says what does.
		since := s.Since
		meanwhile := "shared routines do not run on this device; the missed slots are caught up once it is back"
		switch {
		case s.OfflineLocal:
			meanwhile = `shared routines run on this device alone meanwhile ([hub] offline = "local"), so a slot may also run on another device`
		case s.Refused:
			meanwhile = "shared routines do not run on this device until it is fixed; then the missed slots are caught up"
		}
		msg := fmt.Sprintf("the owner cannot reach the hub %s since %s (%s): %s", s.URL, fmtAgo(&since, now), s.Error, meanwhile)
		if s.Refused {
			msg = fmt.Sprintf("the owner cannot use the hub %s since %s: %s. Meanwhile %s", s.URL, fmtTime(&since, now), s.Error, meanwhile)
		}
		return out, &jsonDiagnosis{Kind: "hub-unreachable", Since: nonZero(since), Message: msg}
	case now.Sub(s.UpdatedAt) > hubStale:
		at := s.UpdatedAt
		return out, &jsonDiagnosis{Kind: "hub-unreachable", Since: nonZero(at), Message: fmt.Sprintf(
			"the owner's hub session has not answered since %s: shared routines may not run on this device", fmtAgo(&at, now))}
	}
	return out, nil
}

// printHub is the human form of the hub part of the status.
func printHub(w io.Writer, h *jsonHub, now time.Time) {
	if h == nil {
		return
	}
	state := "connected"
	if !h.Connected {
		state = "NOT connected"
	}
	if h.UpdatedAt == nil {
		state = "not reported by the owner yet"
	}
	fmt.Fprintf(w, "Hub:        %s as device %s, %s\n", h.URL, h.Device, state)
	for _, d := range h.Devices {
		mark := "  "
		if d.Self {
			mark = "* "
		}
		alive := "up"
		if !d.Alive {
			alive = "gone"
		}
		last := "nothing run yet"
		if d.Last != nil {
			last = fmt.Sprintf("last ran %s (slot %s): %s", d.Last.Routine, fmtTime(&d.Last.Slot, now), d.Last.Outcome)
		}
		fmt.Fprintf(w, "  %s%s: %s, seen %s, version %s, %s\n", mark, d.Name, alive, fmtAgo(d.LastSeen, now), d.Version, last)
	}
	for _, d := range h.Drift {
		fmt.Fprintf(w, "  ! routine %s is defined differently on %s: make routines.toml the same on every device\n", d.Routine, strings.Join(d.Devices, ", "))
	}
	if len(h.NameClash) > 0 {
		fmt.Fprintf(w, "  ! another device on the hub is also called %s: give one of them another name (device under [hub] in routines.toml)\n", h.Device)
	}
	for _, k := range h.Ignored {
		fmt.Fprintf(w, "  ! ignored a claim no device of this hub signed (forged with the hub's token, or from a device without credentials_file): %s\n", k)
	}
}
