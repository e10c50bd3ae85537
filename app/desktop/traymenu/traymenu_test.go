package traymenu

import (
	"reflect"
	"testing"

	"fyne.io/fyne/v2"
)

// menu is the tray's menu in miniature: a disabled status line, a submenu, a separator and a
// toggle.
func menu() []Item {
	return []Item{
		{Label: "Owner: this app", Disabled: true},
		{Label: "Run now", Children: []Item{{Label: "backup"}, {Label: "page-watch", Disabled: true}}},
		{Separator: true},
		{Label: "Start at login", Checked: true, Checkable: true},
		{Label: "Quit"},
	}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		name   string
		change func([]Item) []Item
		want   Change
	}{
		{"identical", func(m []Item) []Item { return m }, Same},
		{"only an action", func(m []Item) []Item { m[4].Action = func() {}; return m }, Same},
		{"a label", func(m []Item) []Item { m[0].Label = "Owner: daemon"; return m }, InPlace},
		{"disabled", func(m []Item) []Item { m[4].Disabled = true; return m }, InPlace},
		{"unchecked", func(m []Item) []Item { m[3].Checked = false; return m }, InPlace},
		{"a submenu label", func(m []Item) []Item { m[1].Children[1].Label = "heartbeat"; return m }, InPlace},
		{"a submenu item enabled", func(m []Item) []Item { m[1].Children[1].Disabled = false; return m }, InPlace},
		{"an item added", func(m []Item) []Item { return append(m, Item{Label: "Take back"}) }, Reshaped},
		{"an item removed", func(m []Item) []Item { return m[1:] }, Reshaped},
		{"a separator moved", func(m []Item) []Item { m[2], m[3] = m[3], m[2]; return m }, Reshaped},
		{"an item became a separator", func(m []Item) []Item { m[4] = Item{Separator: true}; return m }, Reshaped},
		{"a submenu grew", func(m []Item) []Item {
			m[1].Children = append(m[1].Children, Item{Label: "heartbeat"})
			return m
		}, Reshaped},
		{"a submenu appeared", func(m []Item) []Item { m[4].Children = []Item{{Label: "now"}}; return m }, Reshaped},
		{"no longer a checkbox", func(m []Item) []Item { m[3].Checkable = false; return m }, Reshaped},
		{"a label and a new item", func(m []Item) []Item { m[0].Label = "x"; return append(m, Item{}) }, Reshaped},
		{"a label here, a submenu reshaped there", func(m []Item) []Item {
			m[0].Label = "Owner: daemon"
			m[1].Children = m[1].Children[:1]
			return m
		}, Reshaped},
	}
	for _, c := range cases {
		if got := Compare(menu(), c.change(menu())); got != c.want {
			t.Errorf("%s: Compare = %s, want %s", c.name, got, c.want)
		}
	}
	if got := Compare(nil, menu()); got != Reshaped {
		t.Errorf("first show: Compare = %s, want reshaped", got)
	}
	if got := Compare(nil, nil); got != Same {
		t.Errorf("two empty menus: Compare = %s, want same", got)
	}
}

func TestRead(t *testing.T) {
	if got := Read(nil); got != nil {
		t.Errorf("Read(nil) = %v, want no items", got)
	}
	ran := ""
	backup := fyne.NewMenuItem("backup", func() { ran = "backup" })
	runNow := fyne.NewMenuItem("Run now", nil)
	runNow.ChildMenu = fyne.NewMenu("", backup, fyne.NewMenuItemSeparator())
	status := fyne.NewMenuItem("Owner: this app", nil)
	status.Disabled = true
	login := fyne.NewMenuItem("Start at login", nil)
	login.Checked = true
	sep := fyne.NewMenuItemSeparator()
	sep.Label = "never shown"
	m := fyne.NewMenu("Routinely", status, nil, runNow, sep, login)

	got := Read(m)
	want := []Item{
		{Label: "Owner: this app", Disabled: true},
		{Label: "Run now", Children: []Item{{Label: "backup"}, {Separator: true}}},
		{Separator: true},
		{Label: "Start at login", Checked: true},
	}
	if !reflect.DeepEqual(withoutActions(got), want) {
		t.Fatalf("Read = %+v\nwant %+v", got, want)
	}
	if got[1].Action != nil || got[1].Children[0].Action == nil {
		t.Fatal("actions not copied")
	}
	got[1].Children[0].Action()
	if ran != "backup" {
		t.Errorf("the copied action ran %q", ran)
	}

	// A copy: changes to the fyne items after Read do not reach what was read.
	status.Label, login.Checked = "Owner: daemon", false
	runNow.ChildMenu.Items = runNow.ChildMenu.Items[:1]
	if !reflect.DeepEqual(withoutActions(got), want) {
		t.Errorf("changing the menu after Read changed what was read: %+v", got)
	}
	if c := Compare(got, Read(m)); c != Reshaped {
		t.Errorf("reading the changed menu again: %s, want reshaped", c)
	}
}

// withoutActions copies items with every Action nil (reflect.DeepEqual never equates funcs).
func withoutActions(items []Item) []Item {
	var out []Item
	for _, it := range items {
		it.Action, it.Children = nil, withoutActions(it.Children)
		out = append(out, it)
	}
	return out
}
