package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/routinely/routinely/internal/termsafe"
)

// env is what every command's run function needs from the outside world; tests build their own.
type env struct {
	// stdout and stderr escape every control character but newline and tab (termsafe.Writer):
	// what the commands print holds text from outside (run output, hub values, errors), and a
	// terminal would obey it (docs/design.md#10-text-from-outside). rawStdout and rawStderr are
	// the streams themselves, for `history --output --raw` and the progress line, which rewrites
	// itself on a terminal.
	stdout, stderr       io.Writer
	rawStdout, rawStderr io.Writer
	home                 string // --home ("" → $ROUTINELY_HOME → per-OS default)
	logLevel             string // --log-level
	logger               *slog.Logger
	now                  func() time.Time
	getenv               func(string) string
	desktopBuilt         bool // the binary includes the desktop app (not -tags nogui)
}

// newEnv returns the environment of a real run on stdout and stderr: the process clock and
// environment, an info-level logger on stderr.
func newEnv(stdout, stderr io.Writer) *env {
	safeErr := termsafe.NewWriter(stderr)
	return &env{
		stdout: termsafe.NewWriter(stdout), stderr: safeErr, rawStdout: stdout, rawStderr: stderr,
		logger: slog.New(slog.NewTextHandler(safeErr, nil)),
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
