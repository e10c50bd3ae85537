// Package session is the desktop app's lifecycle without any UI: it decides when this app owns
// the routines (at once when free, after standing by and observing while another process owns,
// or on Take back), answers takeover requests by the saved policy, and publishes a State
// snapshot (state.go) whenever something a person would see changes. The window and the tray
// (app/ui) only show those snapshots and call the Session's methods; nothing here imports Fyne.
package session
