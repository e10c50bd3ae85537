// Package desktop is the desktop application, a tray item (app/desktop/tray) with a Fyne window
// started on demand in a window process of its own, and the only package that imports
// fyne.io/fyne/v2/app. A -tags nogui build leaves it empty (main_nogui.go does not use it).
package desktop
