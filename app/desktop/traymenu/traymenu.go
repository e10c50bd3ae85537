// Package traymenu decides what a system tray shows of a fyne.Menu and how that differs from what
// it showed last. It is the one place that compares two menus: the tray menu model (app/ui) asks
// whether anything visible changed at all, so a once-a-second refresh leaves the tray alone, and
// the Linux tray item (app/desktop/tray) asks whether it can update its items in place or must
// rebuild them.
package traymenu

import "fyne.io/fyne/v2"

// Item is one menu item as a tray shows it. Read copies it from a *fyne.MenuItem, so later
// changes to the fyne item show only once the menu is read again.
type Item struct {
	Separator bool // a separator line; the other fields are then unset
	Label     string
	Disabled  bool
	Checked   bool
	// Checkable says the tray builds the item as a checkbox. Read leaves it false; a tray that
	// can show a check mark only on items built as checkboxes (app/desktop/tray) sets it before
	// it compares, so that a change of it counts as a new shape.
	Checkable bool
	// Action is the item's Action when it was read (nil: clicks do nothing). Compare ignores it:
	// a new closure is nothing a person sees.
	Action   func()
	Children []Item // the item's submenu; nil when it has none or it is empty
}

// Change is how a menu differs from the one a tray showed before.
type Change int

const (
	// Same: nothing a tray shows differs (actions may).
	Same Change = iota
	// InPlace: only some labels, Disabled or Checked differ; every item, separator and submenu
	// item is where it was, so a tray can update its existing items.
	InPlace
	// Reshaped: an item or separator was added, removed or moved, a submenu grew or shrank, or
	// an item's Checkable changed; a tray must rebuild its items.
	Reshaped
)

// String names c for test failures and logs.
func (c Change) String() string {
	switch c {
	case Same:
		return "same"
	case InPlace:
		return "in place"
	case Reshaped:
		return "reshaped"
	}
	return "unknown"
}

// Read copies what a tray shows of m's items, submenus included, in order. m may be nil (no
// items); nil items are skipped, and so is a separator's label, which no tray shows.
func Read(m *fyne.Menu) []Item {
	if m == nil {
		return nil
	}
	return read(m.Items)
}

func read(items []*fyne.MenuItem) []Item {
	var out []Item
	for _, it := range items {
		switch {
		case it == nil:
		case it.IsSeparator:
			out = append(out, Item{Separator: true})
		default:
			out = append(out, Item{Label: it.Label, Disabled: it.Disabled, Checked: it.Checked,
				Action: it.Action, Children: Read(it.ChildMenu)})
		}
	}
	return out
}

// Compare reports how next differs from shown, the items a tray showed last (nil before its
// first show). Reshaped wins over InPlace anywhere in the tree.
func Compare(shown, next []Item) Change {
	if len(shown) != len(next) {
		return Reshaped
	}
	c := Same
	for i, was := range shown {
		now := next[i]
		if was.Separator != now.Separator || was.Checkable != now.Checkable {
			return Reshaped
		}
		switch Compare(was.Children, now.Children) {
		case Reshaped:
			return Reshaped
		case InPlace:
			c = InPlace
		}
		if was.Label != now.Label || was.Disabled != now.Disabled || was.Checked != now.Checked {
			c = InPlace
		}
	}
	return c
}
