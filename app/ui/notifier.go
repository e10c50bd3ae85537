package ui

import "fyne.io/fyne/v2"

// Notifier implements scheduler.Notifier with the app's desktop notifications. It sends off the
// caller's goroutine so a slow notification daemon never holds up a routine.
type Notifier struct{ App fyne.App }

// Notify shows title and body as a desktop notification.
func (n Notifier) Notify(title, body string) error {
	go n.App.SendNotification(&fyne.Notification{Title: title, Content: body})
	return nil
}
