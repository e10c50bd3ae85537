package action

import (
	"context"
	"fmt"
)

// notifyAction is `notify = { title, body }`: a desktop notification (the morning-briefing kind).
type notifyAction struct {
	spec     NotifySpec
	notifier Notifier
}

// Run shows the notification. OutcomeSuccess when the Notifier accepts it, OutcomeFailed with
// its error otherwise. ctx is not consulted: Notify is a quick local call.
func (n *notifyAction) Run(_ context.Context, _ Input) Result {
	if err := n.notifier.Notify(n.spec.Title, n.spec.Body); err != nil {
		return failed(fmt.Sprintf("notification %q not shown: %v", n.spec.Title, err))
	}
	return Result{Outcome: OutcomeSuccess, Summary: fmt.Sprintf("notified %q", n.spec.Title)}
}
