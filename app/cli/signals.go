package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/routinely/routinely/app/owning"
)

// Exit codes of a process ended by a second signal, as a shell reports a signal death (128 + n).
const (
	exitSecondSIGINT  = 130
	exitSecondSIGTERM = 143
)

// sameStopWithin is how long after the first stop signal a SIGINT or SIGTERM is the same request
// rather than a second one: GNU timeout(1) sends its signal to the command and then, microseconds
// later, to the command's process group (which the command leads, so it gets it twice), and a
// service manager or a script may do alike. A person who means "exit now" presses Ctrl-C again
// after seeing that the runs are awaited, well after a second.
const sameStopWithin = time.Second

// notifySignals returns a context that the first SIGINT, SIGTERM or SIGHUP cancels, with a
// *owning.StopSignal naming the signal as its cause (context.Cause): commands then stop cleanly
// (the daemon drains and releases). SIGHUP is a stop like SIGTERM because a closed terminal or
// ssh session must not cut the runs in flight; but a SIGHUP ignored when the process started
// (nohup) stays ignored, so the process outlives the terminal as its user asked.
//
// Once stopping, a SIGINT or SIGTERM within sameStopWithin of the first stop signal is the same
// request (one line on stderr says so). One later ends the process with exitSecondSIGINT or
// exitSecondSIGTERM after one line on stderr: it first ends the processes of the runs in flight
// of the owner it serves (the context carries owning.WithExitNow's registry), so that they do not
// outlive it; the next owner records those runs as interrupted. A further SIGHUP changes
// nothing: one hang-up can deliver two, the kernel's to the terminal's foreground job and the
// shell's to each of its jobs. Exiting explicitly, rather than restoring the default
// disposition, also works when the process started with SIGINT ignored, as background jobs of a
// non-interactive shell do.
//
// SIGPIPE is caught and dropped for as long as the handling lasts: when the terminal or the pipe
// reading stderr goes away (a closed `routinely daemon | tee log`), a log line then fails with
// EPIPE instead of killing the process mid-drain, which is Go's default for a write to a broken
// pipe on stdout or stderr (see os/signal). A caught signal is reset to its default in the
// routines' processes when they exec, so they see SIGPIPE as usual. stop ends the handling.
func notifySignals(stderr io.Writer) (ctx context.Context, stop func()) {
	base, cancel := context.WithCancelCause(context.Background())
	ctx, endRuns := owning.WithExitNow(base)
	sigs := make(chan os.Signal, 4)
	stopSignals := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		stopSignals = append(stopSignals, syscall.SIGHUP)
	}
	signal.Notify(sigs, stopSignals...)
	pipes := make(chan os.Signal, 1) // never read: Notify drops what does not fit
	signal.Notify(pipes, syscall.SIGPIPE)
	done := make(chan struct{})
	// exiting is held from an "exit now" until the process exits: ending the runs lets a drain
	// finish, and the command must not return (and the process exit 0) before the exit code
	// of the signal is set. stop takes it too, so it waits for that exit.
	var exiting sync.Mutex
	go func() {
		var first time.Time
		select {
		case sig := <-sigs:
			first = time.Now()
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
				if time.Since(first) < sameStopWithin {
					fmt.Fprintf(stderr, "routinely: %s within %s of the first stop signal is the same request, still waiting for runs in flight; send it again to exit now\n",
						owning.SignalName(sig), sameStopWithin)
					continue
				}
				exiting.Lock() // never unlocked: the process exits below
				fmt.Fprintf(stderr, "routinely: second %s (%s): ending the runs in flight and exiting now\n", sig, owning.SignalName(sig))
				endRuns()
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
		exiting.Lock()
		defer exiting.Unlock()
		signal.Stop(sigs)
		signal.Stop(pipes)
		close(done)
		cancel(context.Canceled)
	}
}
