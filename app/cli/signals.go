package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes of a process ended by a second signal, as a shell reports a signal death (128 + n).
const (
	exitSecondSIGINT  = 130
	exitSecondSIGTERM = 143
)

// notifySignals returns a context that the first SIGINT or SIGTERM cancels: commands then stop
// cleanly (the daemon drains and releases). A second one ends the process at once with
// exitSecondSIGINT or exitSecondSIGTERM after one line on stderr (runs in flight are then recorded
// as interrupted by the next owner). Exiting explicitly, rather than restoring the default
// disposition, also works when the process started with SIGINT ignored, as background jobs of
// a non-interactive shell do. stop ends the handling.
func notifySignals(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "routinely: second %s: exiting now without waiting for runs in flight\n", sig)
			if sig == syscall.SIGTERM {
				os.Exit(exitSecondSIGTERM)
			}
			os.Exit(exitSecondSIGINT)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
