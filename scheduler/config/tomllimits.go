package config

import (
	"bytes"
	"fmt"

	"github.com/pelletier/go-toml/v2/unstable"
)

// MaxNesting is the deepest nesting of arrays and inline tables routines.toml may have. A
// routine needs 3 at most (an inline table in an inline table: watch = { headers = { … } }).
// The TOML parser recurses once per level, about 1.3 KB of stack and heap each: a 400 KB file
// of nested arrays ("x = [[[[…]]]]", 200,000 levels) took 260 MB to parse. So a deeper file is
// refused before it is parsed.
const MaxNesting = 32

// tooDeep returns the byte offset of the first "[" or "{" that opens level MaxNesting+1 of
// data, or -1 when the nesting stays within MaxNesting. It follows TOML's lexical rules just
// enough to skip brackets that are not syntax: those in comments and in the four kinds of
// strings. Table headers ([t], [[t]]) count as the one or two levels they open and close on
// their line. Text that is not valid TOML is scanned as well as it goes; the parser then
// reports it. Linear in len(data).
func tooDeep(data []byte) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '#':
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				return -1
			}
			i += j
		case '"', '\'':
			i = stringEnd(data, i) - 1
		case '[', '{':
			if depth++; depth > MaxNesting {
				return i
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return -1
}

// MaxKeyDepth is the most key parts on the way from the top of routines.toml to a value: a
// table header's parts ([a.b] is 2), the parts of the dotted keys of the inline tables the
// value is in (x = { a.b = { c = 1 } } is 4 for c) and its own key's. A routine needs 4 at
// most ([[routine]] and watch.headers.NAME). Each part is a table the decoder builds and the
// parser keeps a node for: a 1 MiB file of one dotted key "a.a.….a = 1" (524,000 parts) or a
// header as deep took 150 MB to parse and 800 MB to decode. So a deeper key is refused before
// it is parsed, by a scan that keeps nothing per part.
const MaxKeyDepth = 32

// keyFrame is an array or inline table open in a value: its kind ('[' or '{') and the key
// depth of the key it is the value of (where the keys of an inline table start from).
type keyFrame struct {
	kind  byte
	depth int
}

// keysTooDeep returns the byte offset of the first key part past MaxKeyDepth in data (the dot
// before it, or its first byte), or -1 when every key stays within it. Like tooDeep it follows
// TOML's lexical rules just enough: comments and strings (quoted key parts among them) are
// skipped; a line at the top starts a key, or a table header when it starts with "["; "="
// starts a value; in an inline table "{" and "," start a key. Text that is not valid TOML is
// scanned as well as it goes; the parser then reports it. data must be within MaxNesting
// (tooDeep), which bounds the frames kept. Linear in len(data).
func keysTooDeep(data []byte) int {
	var open []keyFrame // arrays and inline tables open in the current value
	header := 0         // parts of the current table header
	depth := 0          // parts counted on the way to the key being read
	value := 0          // the depth of the key whose value is being read
	inKey, inHeader := true, false
	started := false // the key (or header) being read has a part already
	part := func() bool { depth++; return depth > MaxKeyDepth }
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '#':
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				return -1
			}
			i += j - 1 // the newline is handled next
		case c == '\n':
			if len(open) == 0 { // a new line of the file starts a key or a header
				inKey, inHeader, started, depth = true, false, false, header
			}
		case c == ' ' || c == '\t' || c == '\r':
		case !inKey:
			switch c {
			case '"', '\'':
				i = stringEnd(data, i) - 1
			case '[', '{':
				open = append(open, keyFrame{kind: c, depth: value})
				if c == '{' {
					inKey, started, depth = true, false, value
				}
			case ']', '}':
				if len(open) > 0 {
					open = open[:len(open)-1]
				}
				if len(open) > 0 {
					value = open[len(open)-1].depth
				}
			case ',':
				if len(open) > 0 && open[len(open)-1].kind == '{' {
					inKey, started, depth = true, false, open[len(open)-1].depth
				}
			}
		case c == '[' && !started && !inHeader && len(open) == 0:
			inHeader, depth = true, 0
			if i+1 < len(data) && data[i+1] == '[' {
				i++
			}
		case c == ']' && inHeader:
			header, inKey, inHeader = depth, false, false
		case c == '=' || c == '{' || c == '}' || c == ',' || c == '[' || c == ']':
			// The end of the key: "=" starts its value. The others are not TOML here; they are
			// scanned as value bytes, which keeps the frames balanced for what follows.
			inKey, inHeader, value = false, false, depth
			if c != '=' {
				i--
			}
		case c == '.':
			if part() {
				return i
			}
		default: // a bare key byte or a quoted part
			if !started {
				started = true
				if part() {
					return i
				}
			}
			if c == '"' || c == '\'' {
				i = stringEnd(data, i) - 1
			}
		}
	}
	return -1
}

// stringEnd returns the offset just past the TOML string that starts at data[i] (a quote), or
// len(data) when it is not closed. Basic strings (in one or three double quotes) have
// backslash escapes; literal strings (single quotes) have none. A multi-line string may end
// with up to two quotes of its own before the closing three.
func stringEnd(data []byte, i int) int {
	q := data[i]
	basic := q == '"'
	if bytes.HasPrefix(data[i:], []byte{q, q, q}) {
		for j := i + 3; j < len(data); j++ {
			switch {
			case basic && data[j] == '\\':
				j++
			case bytes.HasPrefix(data[j:], []byte{q, q, q}):
				end := j + 3
				for k := 0; k < 2 && end < len(data) && data[end] == q; k++ {
					end++
				}
				return end
			}
		}
		return len(data)
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			if basic && j+1 < len(data) && data[j+1] != '\n' {
				j++
			}
		case q:
			return j + 1
		case '\n':
			return j // a single-line string ends at the line's end at the latest
		}
	}
	return len(data)
}

// MaxTableKeys is the most keys a table of routines.toml may have (counted per [table] or
// [[array table]] section, per inline table) and the most distinct table headers a file may
// have. A routine has 25 keys at most. The TOML decoder finds each key among its table's keys
// by a linear scan, so its time grows with the square of a table's size: 400 KB of "aN = 1"
// lines took 9 s to decode. With every table bounded the decoder's work stays linear in the
// file (at most a few hundred comparisons per key).
const MaxTableKeys = 256

// tooWide returns the byte offset of the first key or table header past MaxTableKeys and
// what it is past, or -1 when every table stays within it. It runs the TOML parser without
// decoding; a file that does not parse is left to the decoder to report (-1). data must be
// within MaxNesting (tooDeep). Linear in len(data).
func tooWide(data []byte) (off int, what string) {
	var p unstable.Parser
	p.Reset(data)
	headers := map[string]bool{}
	var name []byte
	section := 0 // key/value lines since the last header
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
			if section++; section > MaxTableKeys {
				return keyOffset(e), fmt.Sprintf("more than %d keys in one table", MaxTableKeys)
			}
			if off := inlineTooWide(e.Value()); off >= 0 {
				return off, fmt.Sprintf("more than %d keys in one inline table", MaxTableKeys)
			}
		case unstable.Table, unstable.ArrayTable:
			section = 0
			name = name[:0]
			for it := e.Key(); it.Next(); {
				name = append(append(name, it.Node().Data...), '.')
			}
			if !headers[string(name)] {
				if len(headers) == MaxTableKeys {
					return keyOffset(e), fmt.Sprintf("more than %d different table headers", MaxTableKeys)
				}
				headers[string(name)] = true
			}
		}
	}
	return -1, ""
}

// inlineTooWide is tooWide for a value: the offset of the first entry past MaxTableKeys of an
// inline table in v (at any depth of arrays and inline tables), or -1.
func inlineTooWide(v *unstable.Node) int {
	switch v.Kind {
	case unstable.InlineTable, unstable.Array:
		n := 0
		for it := v.Children(); it.Next(); {
			child := it.Node()
			if v.Kind == unstable.InlineTable {
				if n++; n > MaxTableKeys {
					return keyOffset(child)
				}
				child = child.Value()
			}
			if off := inlineTooWide(child); off >= 0 {
				return off
			}
		}
	}
	return -1
}

// keyOffset is the byte offset of the first part of n's key.
func keyOffset(n *unstable.Node) int {
	it := n.Key()
	if !it.Next() {
		return int(n.Raw.Offset)
	}
	return int(it.Node().Raw.Offset)
}
