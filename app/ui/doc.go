// Package ui decides how the desktop app shows a session snapshot (session.State) and what a
// click asks of the app (Actions): the window's views, the tray menu model and icon look, the
// notifications and the takeover prompt. It has no windowing driver, so it is tested headless
// with Fyne's test app.
package ui
