package autostart

import (
	"fmt"
	"path/filepath"
	"strings"
)

// This file holds the Windows Run-key rules that need no registry, so they are tested on
// every OS; runkey_windows.go does the registry I/O.

// RunValueName is our value under HKCU\Software\Microsoft\Windows\CurrentVersion\Run and
// ...\Explorer\StartupApproved\Run.
const RunValueName = "Routinely"

// renderRunValue returns the command line stored in the Run value: the executable always in
// double quotes (CreateProcess would otherwise try "C:\Program" first for a path with spaces),
// then args, each in double quotes when it holds a space or tab or is empty (the rule
// CommandLineToArgvW and Go's os.Args read back). Windows file names cannot contain a double
// quote, so a path with one is refused rather than written ambiguously; so is an argument with
// one, or ending in a backslash inside quotes. The value is REG_SZ: "%" is literal, not expanded.
func renderRunValue(target string, args []string) (string, error) {
	if strings.ContainsAny(target, "\"\x00") {
		return "", fmt.Errorf("%w: %q", ErrUnrepresentable, target)
	}
	line := `"` + target + `"`
	for _, a := range args {
		needQuotes := a == "" || strings.ContainsAny(a, " \t")
		if strings.ContainsAny(a, "\"\x00") || (needQuotes && strings.HasSuffix(a, `\`)) {
			return "", fmt.Errorf("%w: argument %q", ErrUnrepresentable, a)
		}
		if needQuotes {
			a = `"` + a + `"`
		}
		line += " " + a
	}
	return line, nil
}

// parseRunArgs returns the arguments of a Run command line after the executable: tokens
// separated by spaces or tabs, a double-quoted token taken whole (the subset of the
// CommandLineToArgvW rules that renderRunValue writes).
func parseRunArgs(cmd string) []string {
	cmd = strings.TrimSpace(cmd)
	exe := parseRunValue(cmd)
	rest := strings.TrimPrefix(cmd, `"`+exe+`"`)
	if rest == cmd {
		rest = strings.TrimPrefix(cmd, exe)
	}
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for _, r := range rest {
		switch {
		case r == '"':
			quoted, inArg = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}

// parseRunValue returns the executable a Run command line starts: the quoted first token, or
// for an unquoted line the text up to the first ".exe" followed by a space, else the first
// space-separated token.
func parseRunValue(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if rest, ok := strings.CutPrefix(cmd, `"`); ok {
		exe, _, _ := strings.Cut(rest, `"`)
		return exe
	}
	if i := strings.Index(strings.ToLower(cmd), ".exe "); i >= 0 {
		return cmd[:i+len(".exe")]
	}
	exe, _, _ := strings.Cut(cmd, " ")
	return exe
}

// approvedDisabled reads a StartupApproved\Run value: Task Manager and Settings > Apps > Startup
// write 12 bytes whose first byte is 0x02 (enabled) or 0x03 (disabled by the user), followed by
// the FILETIME of the change. Odd first bytes (0x03, 0x07) are treated as disabled; a missing
// or empty value means the user never touched it.
func approvedDisabled(b []byte) bool { return len(b) > 0 && b[0]&1 == 1 }

// staleRunValues returns the names of other Run values that start a routinely.exe: left by an
// older version under another name, they would start a second instance at login.
func staleRunValues(values map[string]string) []string {
	var stale []string
	for name, cmd := range values {
		if strings.EqualFold(name, RunValueName) {
			continue
		}
		if strings.EqualFold(baseWindows(parseRunValue(cmd)), "routinely.exe") {
			stale = append(stale, name)
		}
	}
	return stale
}

// baseWindows is filepath.Base with Windows separators on every OS (the rules above are tested
// on Linux).
func baseWindows(p string) string {
	if i := strings.LastIndexAny(p, `\/`); i >= 0 {
		return p[i+1:]
	}
	return filepath.Base(p)
}

// samePathWindows compares Windows paths: case-insensitive, separators normalised.
func samePathWindows(a, b string) bool {
	norm := func(p string) string { return strings.ToLower(strings.ReplaceAll(p, "/", `\`)) }
	return norm(a) == norm(b)
}
