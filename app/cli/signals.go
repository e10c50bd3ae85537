package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/routinely/routinely/app/owning"
)

// Exit codes of a process ended by a second signal, as a shell reports a signal death (128 + n).
const (
	exitSecondSIGINT  = 130
	exitSecondSIGTERM = 143
)

// notifySignals returns a context that the first SIGINT, SIGTERM or SIGHUP cancels, with a
// *owning.StopSignal naming the signal as its cause (context.Cause): commands then stop cleanly
// (the daemon drains and releases). SIGHUP is a stop like SIGTERM because a closed terminal or
// ssh session must not cut the runs in flight; but a SIGHUP ignored when the process started
// (nohup) stays ignored, so the process outlives the terminal as its user asked.
//
// Once stopping, a SIGINT or SIGTERM ends the process at once with exitSecondSIGINT or
// exitSecondSIGTERM after one line on stderr (runs in flight are then recorded as interrupted
// by the next owner). A further SIGHUP changes nothing: one hang-up can deliver two, the
// kernel's to the terminal's foreground job and the shell's to each of its jobs. Exiting
// explicitly, rather than restoring the default disposition, also works when the process started
// with SIGINT ignored, as background jobs of a non-interactive shell do.
//
// SIGPIPE is caught and dropped for as long as the handling lasts: when the terminal or the pipe
// reading stderr goes away (a closed `routinely daemon | tee log`), a log line then fails with
// EPIPE instead of killing the process mid-drain, which is Go's default for a write to a broken
// pipe on stdout or stderr (see os/signal). A caught signal is reset to its default in the
// routines' processes when they exec, so they see SIGPIPE as usual. stop ends the handling.
func notifySignals(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 4)
	stopSignals := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		stopSignals = append(stopSignals, syscall.SIGHUP)
	}
	signal.Notify(sigs, stopSignals...)
	pipes := make(chan os.Signal, 1) // never read: Notify drops what does not fit
	signal.Notify(pipes, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			cancel(&owning.StopSignal{Signal: sig})
		case <-done:
			return
		}
		for {
			select {
			case sig := <-sigs:
				if sig == syscall.SIGHUP {
					continue
				}
				fmt.Fprintf(stderr, "routinely: second %s (%s): exiting now without waiting for runs in flight\n", sig, owning.SignalName(sig))
				if sig == syscall.SIGTERM {
					os.Exit(exitSecondSIGTERM)
				}
				os.Exit(exitSecondSIGINT)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		signal.Stop(pipes)
		close(done)
		cancel(context.Canceled)
	}
}
