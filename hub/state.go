package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/routinely/routinely/internal/atomicfile"
	"github.com/routinely/routinely/internal/redact"
	"github.com/routinely/routinely/ownership"
)

// StateFile is the file in the state directory where a device's owner writes what it sees of
// the hub (State), for `routinely status` and the desktop app. It is diagnostics only: nothing
// reads it to decide anything.
const StateFile = "hub.json"

// maxStateBytes bounds reading hub.json.
const maxStateBytes = 1 << 20

// State is what hub.json holds.
type State struct {
	PID       int       `json:"pid"` // the owner that writes it
	URL       string    `json:"url"` // without its password (redact.URL)
	Device    string    `json:"device"`
	DeviceID  string    `json:"device_id"` // this device's id (Options.ID)
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since,omitzero"` // not connected: since when
	Error     string    `json:"error,omitempty"`
	// Refused: not connected because the hub refused this device (its token, ErrRefused) or
	// this device refused the hub (its certificate, ErrUntrusted; no TLS, ErrNoTLS): waiting
	// does not help, Error says what does.
	Refused bool `json:"refused,omitempty"`
	// OfflineLocal is the owner's [hub] offline = "local": while not connected it runs the
	// shared routines alone (the owner's, as [hub] is read when it starts, not routines.toml's now).
	OfflineLocal bool `json:"offline_local,omitempty"`
	// Devices are the devices this one has seen on the hub since it started, itself included.
	Devices []DeviceState `json:"devices"`
	// Drift lists the shared routines another live device defines differently.
	Drift []Drift `json:"drift"`
	// NameClash lists the ids of other live devices that use this device's name (Device).
	NameClash []string `json:"name_clash,omitempty"`
	// Ignored lists the claim and run keys this device found on the hub and did not trust (no
	// device of this hub signed them: a forgery by a holder of the hub's token, or a device
	// without credentials_file), "key: why", since the owner started.
	Ignored   []string  `json:"ignored,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// DeviceState is one device as seen on the hub.
type DeviceState struct {
	Name     string    `json:"name"`
	ID       string    `json:"id"` // its key on the hub: its id, or a version before ids' name
	Self     bool      `json:"self"`
	Alive    bool      `json:"alive"` // its liveness key is there
	LastSeen time.Time `json:"last_seen"`
	Version  string    `json:"version"`
	Last     *LastRun  `json:"last"`
}

// Drift is one routine defined differently on other devices.
type Drift struct {
	Routine string   `json:"routine"`
	Devices []string `json:"devices"`
}

// state returns the State as this client sees it now.
func (c *Client) state() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := State{PID: c.opts.PID, URL: redact.URL(c.opts.URL), Device: c.opts.Device, DeviceID: c.opts.ID, Connected: c.downSince.IsZero() && c.nc != nil,
		OfflineLocal: c.opts.OfflineLocal,
		Since:        c.downSince, Devices: []DeviceState{}, Drift: []Drift{}, UpdatedAt: time.Now()}
	if c.downErr != nil {
		s.Error = c.downErr.Error()
		s.Refused = errors.Is(c.downErr, ErrRefused) || errors.Is(c.downErr, ErrUntrusted) || errors.Is(c.downErr, ErrNoTLS)
	}
	self := false
	for key, d := range c.devices {
		isSelf := key == c.opts.ID
		self = self || isSelf
		// This device is up on the hub exactly while it is connected: the liveness key it saw of
		// itself before the hub went away says nothing now. Another device is as last seen.
		name := d.info.label()
		if name == "" {
			name = key // seen only deleted: a version before ids named its key after the device
		}
		s.Devices = append(s.Devices, DeviceState{Name: name, ID: key, Self: isSelf, Alive: isSelf && s.Connected || !isSelf && d.alive,
			LastSeen: d.info.Seen, Version: d.info.Version, Last: d.info.Last})
	}
	if !self {
		s.Devices = append(s.Devices, DeviceState{Name: c.opts.Device, ID: c.opts.ID, Self: true, Alive: s.Connected,
			Version: c.opts.Version, Last: c.last})
	}
	sort.Slice(s.Devices, func(i, j int) bool {
		a, b := s.Devices[i], s.Devices[j]
		return a.Name < b.Name || a.Name == b.Name && a.ID < b.ID
	})
	s.NameClash = append([]string(nil), c.clash...)
	for key, why := range c.ignored {
		s.Ignored = append(s.Ignored, key+": "+why)
	}
	sort.Strings(s.Ignored)
	for routine, devs := range c.drift {
		s.Drift = append(s.Drift, Drift{Routine: routine, Devices: devs})
	}
	sort.Slice(s.Drift, func(i, j int) bool { return s.Drift[i].Routine < s.Drift[j].Routine })
	return s
}

// Snapshot returns what this client sees of the hub now (for an owner in this process, such as
// the desktop app).
func (c *Client) Snapshot() State { return c.state() }

// writeState replaces hub.json in the state directory (when one is set), then tells
// Options.OnChange if the state changed since the last write that succeeded (see stateKey). A
// failed write is logged at debug (it only feeds diagnostics) and tells nothing: a reader of
// hub.json would find the old state.
func (c *Client) writeState() {
	s := c.state()
	if c.opts.StateDir != "" {
		data, err := json.MarshalIndent(s, "", "  ")
		if err == nil {
			err = writeNoSync(filepath.Join(c.opts.StateDir, StateFile), append(data, '\n'))
		}
		if err != nil {
			c.log.Debug("write hub.json", "err", err)
			return // no news to tell: readers see the old hub.json; the next write tells
		}
	}
	key := stateKey(s)
	c.mu.Lock()
	changed := key != c.shown
	c.shown = key
	c.mu.Unlock()
	if changed && c.opts.OnChange != nil {
		c.opts.OnChange()
	}
}

// stateKey is the one rule for when the hub state changed for its readers: s without the times
// that move at every refresh: UpdatedAt, and each device's LastSeen, which moves while the device
// is alive (readers show it only for a device that is gone, and its Alive changed when it went).
func stateKey(s State) string {
	s.UpdatedAt = time.Time{}
	s.Devices = append([]DeviceState(nil), s.Devices...)
	for i := range s.Devices {
		s.Devices[i].LastSeen = time.Time{}
	}
	data, _ := json.Marshal(s) // a State always marshals
	return string(data)
}

// writeNoSync replaces path with data (0600) through a temporary file in the state directory's
// ownership.TempDir and a rename, without fsync: hub.json is rewritten every tick and a torn or
// lost one is only a diagnosis missed. The state directory's watchers (the owner's takeover
// requests, a standby's) then see one event per write, the rename, instead of four.
func writeNoSync(path string, data []byte) error {
	f, err := os.CreateTemp(ownership.TempDir(filepath.Dir(path)), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// ReadState reads hub.json from stateDir. Errors: an error wrapping os.ErrNotExist when there
// is none (no owner with a hub has run here); a file that is not regular, too large or not a
// State, wrapped.
func ReadState(stateDir string) (State, error) {
	var s State
	data, _, err := atomicfile.Read(filepath.Join(stateDir, StateFile), maxStateBytes)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", StateFile, err)
	}
	return s, nil
}
