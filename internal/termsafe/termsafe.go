// Package termsafe makes text from outside Routinely safe to show: a routine's output, a watched
// page, values another device wrote to the hub, error strings. A terminal obeys the control
// characters in what it prints (an OSC 52 sequence sets the clipboard, CSI 2J clears the screen,
// a lone carriage return overwrites a line), and the window's labels draw them as boxes or not
// at all. Escape shows each one as a visible escape instead (docs/design.md#10-text-from-outside).
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character a terminal could act on written as a visible escape,
// and s itself (no copy) when there is none:
//
//   - a C0 control (U+0000–U+001F: ESC, BEL, a lone CR, backspace …), DEL (U+007F) and a C1
//     control (U+0080–U+009F, which some terminals obey as ESC + a letter: U+009B is CSI) become
//     \u00XX, the code point in Go's and JSON's notation;
//   - a byte that is not part of valid UTF-8 becomes \xXX (a terminal in an 8-bit charset would
//     read 0x9B as CSI);
//   - newline, tab and a CR directly followed by a newline (a CRLF line end) are kept.
//
// The escapes are made of printable ASCII, so Escape(Escape(s)) == Escape(s); text in JSON stays
// valid JSON with the same value (JSON escapes C0 itself; \u007f and \u0080–\u009f are JSON's
// own escapes). A backslash in s is kept as it is, so the result is for reading, not for
// decoding: the bytes themselves are what `history --output --raw` prints.
func Escape(s string) string {
	var b strings.Builder
	copied := 0 // s[:copied] is in b already
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == utf8.RuneError && size == 1:
			esc = fmt.Sprintf(`\x%02x`, s[i])
		case r == '\n' || r == '\t' || (r == '\r' && i+1 < len(s) && s[i+1] == '\n'):
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			esc = fmt.Sprintf(`\u%04x`, r)
		}
		if esc != "" {
			if copied == 0 {
				b.Grow(len(s) + len(esc))
			}
			b.WriteString(s[copied:i])
			b.WriteString(esc)
			copied = i + size
		}
		i += size
	}
	if copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}

// Writer passes everything written to it through Escape on its way to the writer it wraps.
// Each Write is escaped as a whole: a UTF-8 sequence split between two writes is shown as its
// bytes (\xXX), as is a CR at the end of one write whose newline starts the next. Every writer
// in Routinely hands over whole strings (fmt, text/tabwriter's cells, encoding/json, log/slog
// records). Safe for concurrent use when the wrapped writer is.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer escaping onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes the result to the wrapped writer. It returns len(p) when all of
// it was written, and 0 with the wrapped writer's error otherwise (an escaped write has no
// byte-for-byte partial count).
func (w *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, Escape(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
