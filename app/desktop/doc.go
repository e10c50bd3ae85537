// Package desktop is the Fyne tray application: the only package that imports
// fyne.io/fyne/v2/app. A -tags nogui build leaves it empty (main_nogui.go does not use it).
package desktop
