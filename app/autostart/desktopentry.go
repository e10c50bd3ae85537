package autostart

import (
	"bufio"
	"fmt"
	"strings"
)

// This file renders and reads desktop entries per the Desktop Entry Specification 1.5
// (https://specifications.freedesktop.org/desktop-entry-spec/latest/).

// execReserved are the characters that force an Exec argument to be quoted (Desktop Entry
// Specification, "The Exec key": space, tab, newline, double quote, single quote, backslash,
// greater-than, less-than, tilde, vertical bar, ampersand, semicolon, dollar, asterisk, question
// mark, hash mark, grave accent, left and right parenthesis).
const execReserved = " \t\n\"'\\><~|&;$*?#`()"

// quoteExecArg quotes one Exec argument per the Desktop Entry Specification, "The Exec key":
// an argument containing a reserved character is enclosed in double quotes, and inside the quotes
// double quote, backquote, dollar sign and backslash are escaped with a backslash. A literal
// percent sign is written "%%" (field codes), quoted or not. The result is the Exec-level text;
// escapeString must still be applied to the whole value.
func quoteExecArg(arg string) string {
	out := arg
	if arg == "" || strings.ContainsAny(arg, execReserved) {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range arg {
			if strings.ContainsRune("\"`$\\", r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
		out = b.String()
	}
	return strings.ReplaceAll(out, "%", "%%")
}

// escapeString applies the general escape rules for values of type string (Desktop Entry
// Specification, "Possible value types"): backslash as \\, newline \n, tab \t, carriage return \r,
// and a leading space as \s. For Exec this is applied after the quoting rule, so a literal
// backslash in a quoted argument ends up as four backslashes in the file, as the spec says.
func escapeString(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' && i == 0:
			b.WriteString(`\s`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unescapeString reverses escapeString; an unknown escape keeps its backslash, so the Exec
// quoting escapes (\" \` \$) survive for splitExec.
func unescapeString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case 's':
			b.WriteByte(' ')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i+1])
		}
		i++
	}
	return b.String()
}

// splitExec splits an unescaped Exec value into arguments, undoing quoteExecArg. Field codes
// other than %% expand to nothing here (an autostart entry is launched without files or URLs).
func splitExec(exec string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	rs := []rune(exec)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quoted && r == '\\' && i+1 < len(rs) && strings.ContainsRune("\"`$\\", rs[i+1]):
			cur.WriteRune(rs[i+1])
			i++
		case quoted && r == '"':
			quoted = false
		case quoted:
			if r == '%' && i+1 < len(rs) && rs[i+1] == '%' {
				i++
			}
			cur.WriteRune(r)
		case r == '"':
			quoted, inArg = true, true
		case r == ' ':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case r == '%' && i+1 < len(rs):
			i++
			if rs[i] == '%' {
				cur.WriteRune('%')
				inArg = true
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("%w: unterminated quote in Exec=%s", ErrMalformed, exec)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// entryKeyMarker marks an autostart entry as written by Routinely, so a stale one under another
// file name can be recognised and removed. Keys starting with X- are the spec's extension keys.
const entryKeyMarker = "X-Routinely-AppID"

// renderDesktopEntry returns the XDG autostart entry that starts target with args (Desktop
// Entry Specification 1.5 and the Desktop Application Autostart Specification). Values never
// contain NUL; target must be absolute and already resolved.
func renderDesktopEntry(target string, args []string) (string, error) {
	exec := ""
	for _, a := range append([]string{target}, args...) {
		if strings.ContainsRune(a, 0) {
			return "", fmt.Errorf("%w: NUL byte in %q", ErrUnrepresentable, a)
		}
		if exec != "" {
			exec += " "
		}
		exec += quoteExecArg(a)
	}
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	b.WriteString("[Desktop Entry]\n")
	line("Type", "Application")
	// The entry uses nothing newer than 1.4, the newest version Debian's desktop-file-validate
	// (0.26) accepts; the Exec rules are the same in 1.5.
	line("Version", "1.4")
	line("Name", "Routinely")
	line("Comment", "Runs your routines in the background, once per slot")
	line("Exec", escapeString(exec))
	// TryExec is a plain string (no Exec quoting, no field codes): if the binary is gone the
	// session skips the entry instead of failing at login.
	line("TryExec", escapeString(target))
	line("Icon", AppID)
	line("Terminal", "false")
	line("X-GNOME-Autostart-enabled", "true")
	line(entryKeyMarker, AppID)
	return b.String(), nil
}

// desktopEntry is the [Desktop Entry] group of a parsed file, values unescaped.
type desktopEntry map[string]string

// parseDesktopEntry reads the keys of the [Desktop Entry] group (Desktop Entry Specification,
// "Basic format of the file"): comments and blank lines are skipped, other groups ignored, and
// spaces around "=" are allowed.
func parseDesktopEntry(text string) (desktopEntry, error) {
	e := desktopEntry{}
	group := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			group = l[1 : len(l)-1]
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				return nil, fmt.Errorf("%w: line %d: %q is not key=value", ErrMalformed, n, l)
			}
			if group == "Desktop Entry" {
				e[strings.TrimSpace(k)] = unescapeString(strings.TrimSpace(v))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return e, nil
}

// hiddenByUser reports whether the user turned the entry off: Hidden=true (Desktop Entry
// Specification, "Recognized desktop entry keys"; the Autostart spec says such an entry must be
// treated as deleted) or X-GNOME-Autostart-enabled=false (what GNOME's Startup Applications and
// Tweaks write).
func (e desktopEntry) hiddenByUser() bool {
	return strings.EqualFold(e["Hidden"], "true") || strings.EqualFold(e["X-GNOME-Autostart-enabled"], "false")
}

// target returns the program the entry starts (the first Exec argument) and the arguments
// after it.
func (e desktopEntry) target() (string, []string, error) {
	args, err := splitExec(e["Exec"])
	if err != nil {
		return "", nil, err
	}
	if len(args) == 0 {
		return "", nil, fmt.Errorf("%w: empty Exec", ErrMalformed)
	}
	return args[0], args[1:], nil
}
