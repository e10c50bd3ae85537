package owning

import "log/slog"

// LogNotifier is the headless daemon's scheduler.Notifier: notifications become log lines.
type LogNotifier struct{ Logger *slog.Logger }

// Notify logs title and body at info level; it never fails.
func (n LogNotifier) Notify(title, body string) error {
	l := n.Logger
	if l == nil {
		l = slog.Default()
	}
	l.Info("notification", "title", title, "body", body)
	return nil
}
