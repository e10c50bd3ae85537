package config

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2/unstable"
)

// pos is a 1-based line and column in routines.toml.
type pos struct{ Line, Col int }

// maxKeyPath is the longest key path keyPositions records, in bytes. Validation asks for paths
// like "routine[9999].watch.headers.Authorization"; a longer one (a hostile or mistyped key)
// is reported at its closest recorded parent. The bound is what keeps the table linear in the
// file size: every key or array element of the file adds at most one entry of at most this
// many bytes, however long the table header or key it sits under.
const maxKeyPath = 128

// maxArrayPositions is how many elements of each array keyPositions records. Validation asks
// for elements of short lists (at, days, notify_on); a problem with a later element of a
// longer array is reported at the array. This keeps a huge array from costing a table entry
// per element.
const maxArrayPositions = 64

// keyPositions maps the key paths of a TOML document to where each key is written. Paths join
// keys with "." and index array-of-tables and array elements as "[i]", e.g.
// "routine[2].watch.url" or "routine[0].at[1]"; paths longer than maxKeyPath and elements past
// maxArrayPositions are left out.
// The data must already parse. Time and memory are linear in len(data).
func keyPositions(data []byte) map[string]pos {
	out := map[string]pos{}
	var p unstable.Parser
	p.Reset(data)
	counts := map[string]int{}
	prefix, skip := "", false // skip: the current table's path is longer than maxKeyPath
	at := newPositioner(data)
	shape := func(n *unstable.Node) pos {
		if n == nil || n.Raw.Length == 0 && n.Raw.Offset == 0 {
			return pos{}
		}
		return at.pos(int(n.Raw.Offset))
	}
	// keyPath joins a key's parts; ok is false when it is longer than maxKeyPath - room.
	keyPath := func(it unstable.Iterator, room int) (path string, first *unstable.Node, ok bool) {
		var parts []string
		n := 0
		for it.Next() {
			if first == nil {
				first = it.Node()
			}
			n += len(it.Node().Data) + 1 // the part and a "." (one too many in all)
			if n-1 > maxKeyPath-room {
				return "", first, false
			}
			parts = append(parts, string(it.Node().Data))
		}
		return strings.Join(parts, "."), first, true
	}
	// join is parent + sep + child, or ok false when that is longer than maxKeyPath.
	join := func(parent, sep, child string) (string, bool) {
		if len(parent)+len(sep)+len(child) > maxKeyPath {
			return "", false
		}
		return parent + sep + child, true
	}
	var walkValue func(path string, v *unstable.Node)
	walkValue = func(path string, v *unstable.Node) {
		switch v.Kind {
		case unstable.InlineTable:
			it := v.Children()
			for it.Next() {
				kv := it.Node()
				k, kn, ok := keyPath(kv.Key(), len(path)+1)
				if !ok {
					continue
				}
				full := path + "." + k
				out[full] = shape(kn)
				walkValue(full, kv.Value())
			}
		case unstable.Array:
			it := v.Children()
			for i := 0; i < maxArrayPositions && it.Next(); i++ {
				el := it.Node()
				ep, ok := join(path, "", "["+strconv.Itoa(i)+"]")
				if !ok {
					return
				}
				out[ep] = shape(el)
				walkValue(ep, el)
			}
		}
	}
	// header resolves a table header's key: a part naming an array of tables means its latest
	// element ("[routine.watch]" after the third [[routine]] is "routine[2].watch"); for an
	// [[array table]] the last part gets the index of the new element. ok is false when the
	// path is longer than maxKeyPath.
	header := func(e *unstable.Node) (path string, first *unstable.Node, ok bool) {
		var parts []*unstable.Node
		for it := e.Key(); it.Next(); {
			parts = append(parts, it.Node())
		}
		var b strings.Builder
		for i, part := range parts {
			if b.Len()+1+len(part.Data) > maxKeyPath {
				return "", parts[0], false
			}
			if i > 0 {
				b.WriteByte('.')
			}
			b.Write(part.Data)
			n, isArray := counts[b.String()]
			if e.Kind == unstable.ArrayTable && i == len(parts)-1 {
				isArray, n = true, n+1
				counts[b.String()] = n
			}
			if isArray {
				b.WriteString("[" + strconv.Itoa(n-1) + "]")
			}
		}
		if len(parts) == 0 || b.Len() > maxKeyPath {
			return "", nil, false
		}
		return b.String(), parts[0], true
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			k, kn, ok := header(e)
			prefix, skip = k, !ok
			if ok {
				out[prefix] = shape(kn)
			}
		case unstable.KeyValue:
			if skip {
				continue
			}
			room := 0
			if prefix != "" {
				room = len(prefix) + 1
			}
			k, kn, ok := keyPath(e.Key(), room)
			if !ok {
				continue
			}
			full := k
			if prefix != "" {
				full = prefix + "." + k
			}
			out[full] = shape(kn)
			walkValue(full, e.Value())
		}
	}
	return out
}

// positioner turns byte offsets into line:column positions (columns count runes). Offsets
// usually come in increasing order (the parser reads the file once), so it scans forward from
// the previous one: linear in the file for the whole document. An earlier offset is found from
// its line start, located by binary search.
type positioner struct {
	data   []byte
	lines  []int // byte offset of each line start
	off    int   // the previous offset and its position
	line   int   // 0-based index into lines
	column int   // 1-based, in runes
}

func newPositioner(data []byte) *positioner {
	lines := []int{0}
	for i, c := range data {
		if c == '\n' {
			lines = append(lines, i+1)
		}
	}
	return &positioner{data: data, lines: lines, column: 1}
}

func (p *positioner) pos(off int) pos {
	if off < p.off {
		p.line = sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off }) - 1
		p.off, p.column = p.lines[p.line], 1
	}
	for p.line+1 < len(p.lines) && p.lines[p.line+1] <= off {
		p.line++
		p.off, p.column = p.lines[p.line], 1
	}
	p.column += utf8.RuneCount(p.data[p.off:off])
	p.off = off
	return pos{p.line + 1, p.column}
}
