package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/routinely/routinely/internal/termsafe"
)

// progress is a spinner-free progress line for waits a person watches (takeover, run now): on a
// terminal it rewrites one line with the elapsed time every second; elsewhere (logs, tests) it
// prints each new message once and a "still …" line every 10 s.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time

	mu      sync.Mutex
	msg     string
	lastOut time.Time
	stop    chan struct{}
	done    chan struct{}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startProgress starts the line on w; call Stop to end it.
func startProgress(ctx context.Context, w io.Writer) *progress {
	p := &progress{w: w, tty: isTerminal(w), start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop(ctx)
	return p
}

// Set changes the message; it is printed at once when it differs from the current one. The
// line is written raw (it rewrites itself with CR and CSI K on a terminal), so msg is escaped
// here (termsafe.Escape): it names owners and routines.
func (p *progress) Set(msg string) {
	msg = termsafe.Escape(msg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if msg == p.msg {
		return
	}
	p.msg = msg
	p.printLocked(false)
}

// printLocked prints the current message: rewriting the line on a terminal, else as a new line
// (prefixed "still" for the periodic reminder). Callers hold p.mu.
func (p *progress) printLocked(still bool) {
	if p.msg == "" {
		return
	}
	elapsed := time.Since(p.start).Truncate(time.Second)
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%s %s", p.msg, elapsed)
	case still:
		fmt.Fprintf(p.w, "still %s (%s)\n", p.msg, elapsed)
	default:
		fmt.Fprintln(p.w, p.msg)
	}
	p.lastOut = time.Now()
}

// loop refreshes the line every second on a terminal, and every 10 s elsewhere, until Stop or
// ctx ends.
func (p *progress) loop(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.tty || time.Since(p.lastOut) >= 10*time.Second {
				p.printLocked(true)
			}
			p.mu.Unlock()
		}
	}
}

// Stop ends the line (a newline on a terminal) and waits for the ticker goroutine.
func (p *progress) Stop() {
	select {
	case <-p.stop:
		return
	default:
		close(p.stop)
	}
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.msg != "" {
		fmt.Fprintln(p.w)
	}
}
