// Package ui is the desktop app's look and feel without a windowing driver: view models,
// widgets, the tray menu model and the takeover prompt, testable headless with fyne's test app.
package ui
