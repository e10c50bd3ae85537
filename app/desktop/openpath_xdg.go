//go:build (linux || freebsd || openbsd || netbsd) && !nogui

package desktop

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"fyne.io/fyne/v2"
)

// openWait bounds how long OpenConfig waits for xdg-open's answer: it exits once the handler
// has started (or it found none), which takes well under a second. An opener still running
// after openWait is taken to have started an app, and is left to finish by itself.
var openWait = 5 * time.Second

// openPath opens path with the desktop's default handler through xdg-open(1) and waits for its
// exit status, since Fyne's OpenURL only starts it and never learns that no application handles
// the file. Errors: xdg-open is missing; it exited non-zero (exit 3: no tool found; 4: the
// action failed), with the first line of what it printed.
func openPath(_ fyne.App, path string) error {
	cmd := exec.Command("xdg-open", path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedWriter{w: &out, left: 4 << 10}, &limitedWriter{w: &out, left: 4 << 10}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("cannot open %s: xdg-open is not installed (install xdg-utils), or open the file in an editor yourself", path)
		}
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		why := firstLine(out.String())
		if why == "" {
			why = err.Error()
		}
		return fmt.Errorf("no application opened %s (xdg-open: %s); open it in an editor yourself", path, why)
	case <-time.After(openWait):
		return nil
	}
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// limitedWriter keeps the first left bytes written and drops the rest (a chatty opener must not
// grow memory).
type limitedWriter struct {
	w    *bytes.Buffer
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	n := min(len(p), l.left)
	l.w.Write(p[:n])
	l.left -= n
	return len(p), nil
}
