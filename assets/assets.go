// Package assets embeds Routinely's icons as PNG bytes, free of any UI toolkit.
package assets

import _ "embed"

// The PNGs are drawn by gen/main.go (`go run assets/gen/main.go` from the repository root);
// edit the generator, not the images.

// AppIcon is the 512×512 application icon (FyneApp.toml, .desktop entry, window icon).
//
//go:embed icon.png
var AppIcon []byte

// TrayOwning is the 64×64 tray icon while this process owns the schedule.
//
//go:embed tray-owning.png
var TrayOwning []byte

// TrayStandby is the 64×64 greyed tray icon while another process owns (standby observer).
//
//go:embed tray-standby.png
var TrayStandby []byte

// TrayWarning is the 64×64 tray icon with an amber badge (wedged owner, failed write, ...).
//
//go:embed tray-warning.png
var TrayWarning []byte
