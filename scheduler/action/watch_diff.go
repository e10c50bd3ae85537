package action

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// diffText compares two normalised snapshots line by line. It returns the unified diff
// (3 lines of context, files named "previous" and "current") and the numbers of lines added and
// removed. The error is difflib's writer error, which cannot happen with its string writer but
// is passed on rather than hidden.
func diffText(prev, cur string) (unified string, added, removed int, err error) {
	a, b := splitLines(prev), splitLines(cur)
	for _, op := range difflib.NewMatcher(a, b).GetOpCodes() {
		switch op.Tag {
		case 'r':
			removed += op.I2 - op.I1
			added += op.J2 - op.J1
		case 'd':
			removed += op.I2 - op.I1
		case 'i':
			added += op.J2 - op.J1
		}
	}
	unified, err = difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: a, B: b, FromFile: "previous", ToFile: "current", Context: 3,
	})
	if err != nil {
		return "", 0, 0, fmt.Errorf("unified diff: %w", err)
	}
	return unified, added, removed, nil
}

// changeSummary is the one-line Summary of a change, e.g. "+2 −1 lines".
func changeSummary(added, removed int) string {
	return fmt.Sprintf("+%d −%d lines", added, removed)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return difflib.SplitLines(s)
}

// changeBody is a change notification's body: the Summary, then up to max added lines ("+ ")
// and max removed lines ("− ") read back from the unified diff in res.Output, each cut to
// 80 characters.
func changeBody(res Result, max int) string {
	var added, removed []string
	inHunk := false // "---"/"+++" are file headers only before the first "@@"
	for _, line := range strings.Split(string(res.Output), "\n") {
		switch {
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case !inHunk:
		case strings.HasPrefix(line, "+"):
			added = append(added, line[1:])
		case strings.HasPrefix(line, "-"):
			removed = append(removed, line[1:])
		}
	}
	lines := []string{res.Summary}
	lines = append(lines, highlights("+ ", added, max)...)
	lines = append(lines, highlights("− ", removed, max)...)
	return joinLines(lines)
}

func highlights(prefix string, lines []string, max int) []string {
	var out []string
	for i, l := range lines {
		if i == max {
			out = append(out, fmt.Sprintf("%s… and %d more", prefix, len(lines)-max))
			break
		}
		out = append(out, prefix+cut(l, 80))
	}
	return out
}

// cut shortens s to n runes, marking the cut with "…".
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// joinLines joins the non-empty lines with "\n".
func joinLines(lines []string) string {
	var kept []string
	for _, l := range lines {
		if l != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}
