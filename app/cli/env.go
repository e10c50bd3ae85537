package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// env is what every command's run function needs from the outside world; tests build their own.
type env struct {
	stdout, stderr io.Writer
	home           string // --home ("" → $ROUTINELY_HOME → per-OS default)
	logLevel       string // --log-level
	logger         *slog.Logger
	now            func() time.Time
	getenv         func(string) string
	desktopBuilt   bool // the binary includes the desktop app (not -tags nogui)
}

// newEnv returns the environment of a real run: the process clock and environment, an info-level
// logger on stderr.
func newEnv(stdout, stderr io.Writer) *env {
	return &env{
		stdout: stdout, stderr: stderr,
		logger: slog.New(slog.NewTextHandler(stderr, nil)),
		now:    time.Now,
		getenv: os.Getenv,
	}
}

// setupLogger builds the stderr slog logger from --log-level.
func (e *env) setupLogger() error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.TrimSpace(e.logLevel))); err != nil {
		return fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", errUsage, e.logLevel)
	}
	e.logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	return nil
}
