package ui

import (
	"fyne.io/fyne/v2"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/assets"
)

// Look is one of the tray icon's three looks.
type Look int

// Looks: this app owns, another process owns (muted), or something needs attention.
const (
	LookOwning Look = iota
	LookStandby
	LookWarning
)

// Icon resources, built once: the tray re-encodes an icon on every change, not every second.
var (
	AppIcon     = fyne.NewStaticResource("routinely.png", assets.AppIcon)
	iconOwning  = fyne.NewStaticResource("tray-owning.png", assets.TrayOwning)
	iconStandby = fyne.NewStaticResource("tray-standby.png", assets.TrayStandby)
	iconWarning = fyne.NewStaticResource("tray-warning.png", assets.TrayWarning)
)

// LookFor picks the tray look for s.
func LookFor(s session.State) Look {
	switch {
	case warning(s):
		return LookWarning
	case s.Mode == session.ModeOwning:
		return LookOwning
	}
	return LookStandby
}

// Resource is the icon for l.
func (l Look) Resource() fyne.Resource {
	switch l {
	case LookOwning:
		return iconOwning
	case LookWarning:
		return iconWarning
	}
	return iconStandby
}

func (l Look) String() string {
	return [...]string{"owning", "standby", "warning"}[l]
}
