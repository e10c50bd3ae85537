package owning

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// StopSignal is the cause (see context.Cause) of a context that ended because the process
// received a stop signal: the command line cancels every command's context with one on the first
// SIGINT, SIGTERM or SIGHUP. Serve logs which signal it was; the desktop app reads it to tell a
// signal its UI toolkit also reacts to (SIGINT, SIGTERM) from one it does not (SIGHUP).
type StopSignal struct {
	Signal os.Signal
}

// Error names the signal: "received SIGHUP".
func (s *StopSignal) Error() string { return "received " + SignalName(s.Signal) }

// SignalName returns the conventional name of a stop signal ("SIGINT", "SIGTERM", "SIGHUP"), or
// Go's description of any other signal.
func SignalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// SignalOf returns the stop signal that ended ctx, or nil when ctx has not ended or ended for
// another reason (a parent's cancel, a deadline).
func SignalOf(ctx context.Context) os.Signal {
	var s *StopSignal
	if errors.As(context.Cause(ctx), &s) {
		return s.Signal
	}
	return nil
}
