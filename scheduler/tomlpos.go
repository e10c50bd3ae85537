package scheduler

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2/unstable"
)

// pos is a 1-based line and column in routines.toml.
type pos struct{ Line, Col int }

// keyPositions maps every key path of a TOML document to where the key is written. Paths join
// keys with "." and index array-of-tables and array elements as "[i]", e.g.
// "routine[2].watch.url" or "routine[0].at[1]". The data must already parse.
func keyPositions(data []byte) map[string]pos {
	out := map[string]pos{}
	var p unstable.Parser
	p.Reset(data)
	counts := map[string]int{}
	prefix := ""
	// Line starts, so an offset becomes a position by binary search (Parser.Shape rescans the
	// document from the start on every call, which is quadratic for 10,000 routines).
	lines := []int{0}
	for i, c := range data {
		if c == '\n' {
			lines = append(lines, i+1)
		}
	}
	shape := func(n *unstable.Node) pos {
		if n == nil || n.Raw.Length == 0 && n.Raw.Offset == 0 {
			return pos{}
		}
		off := int(n.Raw.Offset)
		l := sort.Search(len(lines), func(i int) bool { return lines[i] > off }) - 1
		return pos{l + 1, utf8.RuneCount(data[lines[l]:off]) + 1}
	}
	keyPath := func(it unstable.Iterator) (string, *unstable.Node) {
		var parts []string
		var first *unstable.Node
		for it.Next() {
			if first == nil {
				first = it.Node()
			}
			parts = append(parts, string(it.Node().Data))
		}
		return strings.Join(parts, "."), first
	}
	var walkValue func(path string, v *unstable.Node)
	walkValue = func(path string, v *unstable.Node) {
		switch v.Kind {
		case unstable.InlineTable:
			it := v.Children()
			for it.Next() {
				kv := it.Node()
				k, kn := keyPath(kv.Key())
				out[path+"."+k] = shape(kn)
				walkValue(path+"."+k, kv.Value())
			}
		case unstable.Array:
			it := v.Children()
			for i := 0; it.Next(); i++ {
				el := it.Node()
				ep := path + "[" + strconv.Itoa(i) + "]"
				out[ep] = shape(el)
				walkValue(ep, el)
			}
		}
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			k, kn := keyPath(e.Key())
			prefix = k
			if i, ok := counts[k]; ok { // sub-table of the latest array table element
				prefix = k + "[" + strconv.Itoa(i-1) + "]"
			}
			out[prefix] = shape(kn)
		case unstable.ArrayTable:
			k, kn := keyPath(e.Key())
			prefix = k + "[" + strconv.Itoa(counts[k]) + "]"
			counts[k]++
			out[prefix] = shape(kn)
		case unstable.KeyValue:
			k, kn := keyPath(e.Key())
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
