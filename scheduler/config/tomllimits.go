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
