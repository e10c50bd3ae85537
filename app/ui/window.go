package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/routinely/routinely/app/desktop/session"
	"github.com/routinely/routinely/internal/termsafe"
)

// MainView is the window's content: the wedge banner and owner panel above tabs for the
// routines, their history and the settings.
type MainView struct {
	Banner   *WedgeBanner
	Config   *ConfigBanner // heads the routines tab while routines.toml cannot be used
	Owner    *OwnerPanel
	Routines *RoutinesTable
	History  *HistoryView
	Settings *SettingsView
	Error    *widget.Label
	Content  fyne.CanvasObject
}

// NewMainView builds the window content.
func NewMainView(a Actions) *MainView {
	v := &MainView{Error: widget.NewLabel("")}
	v.Error.Wrapping = fyne.TextWrapWord
	v.Error.Importance = widget.DangerImportance
	v.Error.Hide()
	v.Banner = NewWedgeBanner(a, v.ShowError)
	v.Owner = NewOwnerPanel(a.TakeBack)
	v.Routines = NewRoutinesTable(a, v.ShowError)
	v.Config = NewConfigBanner()
	v.History = NewHistoryView(a)
	v.Settings = NewSettingsView(a, v.ShowError)
	history := container.NewTabItem("History", v.History)
	tabs := container.NewAppTabs(
		container.NewTabItem("Routines", container.NewBorder(v.Config, nil, nil, nil, v.Routines)),
		history,
		container.NewTabItem("Settings", container.NewVScroll(v.Settings)),
	)
	tabs.OnSelected = func(t *container.TabItem) {
		if t == history {
			v.History.Shown()
		}
	}
	// Selecting a routine's row opens its history.
	v.Routines.OnSelected = func(id widget.TableCellID) {
		v.Routines.UnselectAll()
		if id.Row >= 0 && id.Row < len(v.Routines.rows) && id.Col != colActions {
			v.History.Load(v.Routines.rows[id.Row].Name)
			tabs.Select(history)
		}
	}
	top := container.NewVBox(v.Banner, widget.NewCard("", "", v.Owner), v.Error)
	v.Content = container.NewBorder(top, nil, nil, nil, tabs)
	return v
}

// Update shows s everywhere in the window; call it on the UI goroutine.
func (v *MainView) Update(s session.State) {
	v.Banner.Update(s)
	v.Config.Update(s)
	v.Owner.Update(s)
	v.Routines.Update(s)
	v.Settings.Update(s)
	names := make([]string, 0, len(s.Routines))
	for _, r := range s.Routines {
		names = append(names, r.Name)
	}
	v.History.ShowDevices(s.Hub != nil)
	v.History.SetRoutines(names)
	v.History.Follow(s.Routines)
}

// ShowError shows a failed action under the owner panel until the next one.
func (v *MainView) ShowError(err error) {
	if err == nil {
		v.Error.Hide()
		return
	}
	v.Error.SetText(termsafe.Escape(err.Error()))
	v.Error.Show()
}

// NewMainMenu is the window's menu bar: the window's way to open the routines file and to Quit
// (which, like the tray's Quit, drains runs and releases ownership first). onError (may be nil)
// shows why the file did not open.
func NewMainMenu(a Actions, onError func(error)) *fyne.MainMenu {
	quit := fyne.NewMenuItem(LabelQuit, a.Quit)
	quit.IsQuit = true
	return fyne.NewMainMenu(fyne.NewMenu("Routinely",
		fyne.NewMenuItem("Open routines file", func() { openConfig(a, onError) }),
		fyne.NewMenuItemSeparator(),
		quit,
	))
}
