//go:build !nogui

// Command fyneidle is the desktop footprint's baseline: the least a Fyne v2.7.1 app can be, a
// window with one label refreshed every second, measured by app/desktop/testdata/footprint.sh
// like the real app (`footprint.sh build/fyneidle 300`).
package main

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/widget"

	_ "github.com/routinely/routinely/app/desktop/locale" // Fyne cannot parse the C locale
)

func main() {
	a := app.NewWithID("io.routinely.fyneidle")
	w := a.NewWindow("Routinely")
	w.Resize(fyne.NewSize(1000, 640))
	label := widget.NewLabel("")
	w.SetContent(label)
	go func() {
		for now := range time.Tick(time.Second) {
			fyne.Do(func() { label.SetText(now.Format(time.TimeOnly)) })
		}
	}()
	w.ShowAndRun()
}
