package owning

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/routinely/routinely/app/paths"
	"github.com/routinely/routinely/hub"
	"github.com/routinely/routinely/internal/redact"
	"github.com/routinely/routinely/scheduler"
	"github.com/routinely/routinely/scheduler/config"
)

// hubClient returns the hub coordinator for p's routines.toml when it has a [hub] table, and
// nil (the single-device engine, unchanged) when it has none or cannot be read now (the engine
// then reports that file). onChange (may be nil) is told when what the device sees of the hub
// changed (hub.Options.OnChange). [hub] is read when the routines start: a change applies at the next
// start. The device's id on the hub is kept in the state directory (hub.LoadID, made at the
// first start). Errors: a [hub] that is invalid or whose token or ca_file cannot be read,
// wrapping config.ErrConfig, since running shared routines without the hub could run them
// twice; the device id file's (hub.ErrDeviceID and the file system's, wrapped).
func hubClient(p paths.Paths, version string, logger *slog.Logger, onChange func()) (scheduler.Coordinator, error) {
	cfg, err := config.LoadConfig(p.Config)
	if err != nil {
		return nil, nil
	}
	if cfg.HubInvalid {
		var where []string
		for _, pr := range cfg.Problems {
			if pr.Routine == "" {
				where = append(where, pr.String())
			}
		}
		return nil, fmt.Errorf("[hub] is not usable, and the routines are not run alone instead (a shared one could run twice): %s: %w",
			strings.Join(where, "; "), config.ErrConfig)
	}
	if cfg.Hub == nil {
		return nil, nil
	}
	h := cfg.Hub
	// With credentials_file alone the device connects with its key; the token is then needed
	// only by devices without credentials.
	var token string
	if h.Token != "" || h.TokenFile != "" {
		t, err := h.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: [hub]: %w: %w", p.Config, h.Line, h.Col, err, config.ErrConfig)
		}
		token = t
	}
	// The certificate a hub must show is kept where the profile's secrets are: whoever could
	// change it could put a hub of theirs in the middle.
	roots, err := h.ReadCA()
	if err != nil {
		return nil, fmt.Errorf("%s:%d:%d: [hub]: %w: %w", p.Config, h.Line, h.Col, err, config.ErrConfig)
	}
	var creds *hub.Creds
	if data, err := h.ReadCredentials(); err != nil {
		return nil, fmt.Errorf("%s:%d:%d: [hub]: %w: %w", p.Config, h.Line, h.Col, err, config.ErrConfig)
	} else if data != nil {
		if creds, err = hub.ParseCreds(data); err != nil {
			return nil, fmt.Errorf("%s:%d:%d: [hub]: credentials_file %s: %w (copy the file `routinely hub add-device` wrote for this device again): %w",
				p.Config, h.Line, h.Col, h.CredentialsFile, err, config.ErrConfig)
		}
	}
	device := h.Device
	if creds != nil {
		if h.Device != creds.Name {
			logger.Info("the device takes the name its credentials carry, not [hub] device or the host name", "device", creds.Name, "not", h.Device)
		}
		device = creds.Name // the name the hub signed: the one its claims carry
	}
	id, err := hub.LoadID(p.State)
	if err != nil {
		return nil, err
	}
	logger.Info("sharing the routines through the hub", "hub", redact.URL(h.URL), "device", device, "device_id", id, "offline", h.Offline)
	return hub.New(hub.Options{URL: h.URL, Token: token, TokenFile: h.TokenFile, RootCAs: roots,
		ID: id, Creds: creds, Device: device, LivenessTTL: h.LivenessTTL,
		OfflineLocal: h.Offline == config.OfflineLocal, Version: version, StateDir: p.State,
		PID: os.Getpid(), Logger: logger, OnChange: onChange}), nil
}
