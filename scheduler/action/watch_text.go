package action

import (
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// Turning the selected part of a page into comparable text: one line per block element, runs
// of whitespace collapsed, blank and ignored lines dropped. goquery's Selection.Text joins
// everything into one run, which would make every change a one-line diff, so block elements
// are broken into lines here.

// blockTags start a new line before and after their content.
var blockTags = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "dd": true, "div": true,
	"dl": true, "dt": true, "fieldset": true, "figcaption": true, "figure": true, "footer": true,
	"form": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"header": true, "hr": true, "li": true, "main": true, "nav": true, "ol": true, "p": true,
	"pre": true, "section": true, "table": true, "td": true, "th": true, "tr": true, "ul": true,
}

// hiddenTags hold no visible text.
var hiddenTags = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "head": true}

// sourceBreaks turns line breaks of the HTML source into spaces.
var sourceBreaks = strings.NewReplacer("\r", " ", "\n", " ")

// selectionText returns the visible text of every node in sel, one line per block.
func selectionText(sel *goquery.Selection) string {
	var b strings.Builder
	for _, n := range sel.Nodes {
		writeText(&b, n, false)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeText writes n's text. Line breaks in the HTML source are only whitespace, except inside
// <pre>; lines come from block elements and <br>.
func writeText(b *strings.Builder, n *html.Node, pre bool) {
	switch n.Type {
	case html.TextNode:
		if pre {
			b.WriteString(n.Data)
		} else {
			b.WriteString(sourceBreaks.Replace(n.Data))
		}
		return
	case html.CommentNode:
		return
	case html.ElementNode:
		if hiddenTags[n.Data] {
			return
		}
		if n.Data == "br" {
			b.WriteByte('\n')
			return
		}
	}
	block := n.Type == html.ElementNode && blockTags[n.Data]
	if block {
		b.WriteByte('\n')
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		writeText(b, c, pre || (n.Type == html.ElementNode && n.Data == "pre"))
	}
	if block {
		b.WriteByte('\n')
	}
}

// normalise collapses whitespace inside each line (Unicode spaces included), drops blank lines
// and lines matching any of ignore, and joins the rest with "\n" (no trailing newline).
func normalise(text string, ignore []*regexp.Regexp) string {
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" || matchesAny(ignore, line) {
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

func matchesAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
