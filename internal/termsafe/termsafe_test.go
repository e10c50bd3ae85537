package termsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain text is kept", "hello, wörld ✓ 日本", "hello, wörld ✓ 日本"},
		{"newline and tab are kept", "a\tb\nc\n", "a\tb\nc\n"},
		{"a CRLF line end is kept", "one\r\ntwo\r\n", "one\r\ntwo\r\n"},
		{"a lone CR is escaped", "ok\rFAKE", `ok\u000dFAKE`},
		{"a CR at the end is escaped", "x\r", `x\u000d`},
		{"OSC 52 (set the clipboard) and CSI 2J (clear the screen)",
			"before\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07\x1b[2Jafter",
			`before\u001b]52;c;Y3VybCBldmlsLnNofHNo\u0007\u001b[2Jafter`},
		{"NUL, backspace, form feed, vertical tab", "\x00\b\f\v", `\u0000\u0008\u000c\u000b`},
		{"DEL", "a\x7fb", `a\u007fb`},
		{"C1 controls as UTF-8 (U+0080, U+0085, U+009B CSI, U+009D OSC, U+009F)",
			"\u0080\u0085\u009b2J\u009d52;c;x\u009c\u009f", `\u0080\u0085\u009b2J\u009d52;c;x\u009c\u009f`},
		{"U+00A0 and above are printable", "\u00a0\u00e9\u2028", "\u00a0\u00e9\u2028"},
		{"raw 8-bit C1 bytes (invalid UTF-8)", "a\x9b2Jb\x9d", `a\x9b2Jb\x9d`},
		{"invalid UTF-8: a truncated sequence and a stray byte", "\xe2\x82 \xff", `\xe2\x82 \xff`},
		{"a valid U+FFFD is kept", "\uFFFD", "\uFFFD"},
		{"backslashes are kept", `C:\path\u001b`, `C:\path\u001b`},
		{"empty", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Escape(c.in)
			if got != c.want {
				t.Fatalf("Escape(%q) = %q, want %q", c.in, got, c.want)
			}
			if again := Escape(got); again != got {
				t.Fatalf("Escape is not idempotent: %q → %q", got, again)
			}
			for i := 0; i < len(got); {
				r, size := utf8.DecodeRuneInString(got[i:])
				if (r == utf8.RuneError && size == 1) || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
					(r < 0x20 && r != '\n' && r != '\t' && !(r == '\r' && strings.HasPrefix(got[i+1:], "\n"))) {
					t.Fatalf("Escape(%q) = %q still holds %U at byte %d", c.in, got, r, i)
				}
				i += size
			}
		})
	}
}

// Escaped JSON stays valid JSON with the same value: the CLI escapes its --json output too.
func TestEscapeKeepsJSON(t *testing.T) {
	in := map[string]string{"output": "a\x1b[2J\u009b\x7f\t\"\\ é\x9b"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	esc := Escape(string(raw))
	var back map[string]string
	if err := json.Unmarshal([]byte(esc), &back); err != nil {
		t.Fatalf("escaped JSON %s: %v", esc, err)
	}
	// encoding/json already wrote the invalid byte as U+FFFD; everything else survives.
	if want := "a\x1b[2J\u009b\x7f\t\"\\ é\uFFFD"; back["output"] != want {
		t.Fatalf("escaped JSON decodes to %q, want %q", back["output"], want)
	}
}

func TestEscapeCopiesNothingWhenClean(t *testing.T) {
	s := strings.Repeat("clean line\n", 100)
	if n := testing.AllocsPerRun(100, func() { _ = Escape(s) }); n != 0 {
		t.Fatalf("Escape of clean text allocated %v times, want 0", n)
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	p := []byte("x\x1b]52;c;eA==\x07y\n")
	n, err := w.Write(p)
	if err != nil || n != len(p) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(p))
	}
	if got, want := buf.String(), `x\u001b]52;c;eA==\u0007y`+"\n"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

type failing struct{}

var errFull = errors.New("disk full")

func (failing) Write([]byte) (int, error) { return 0, errFull }

func TestWriterReportsTheError(t *testing.T) {
	if n, err := NewWriter(failing{}).Write([]byte("a")); n != 0 || !errors.Is(err, errFull) {
		t.Fatalf("Write = %d, %v; want 0, %v", n, err, errFull)
	}
}
