package config

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// hostileConfigs are files built to make the loader work hard: deep nesting, tables with many
// keys, many headers, huge arrays, long keys. Each is about size bytes (except the deep ones,
// small as in the reports: 40 KB took 6 s and 646 MB before the limits). want is the error
// the load must return, or nil when the file is within the limits and loads.
func hostileConfigs(size int) []struct {
	name string
	data []byte
	want error
} {
	fill := func(unit func(i int) string) []byte {
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			b.WriteString(unit(i))
		}
		return []byte(b.String())
	}
	return []struct {
		name string
		data []byte
		want error
	}{
		{"nested arrays", []byte("x = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"), errTooDeep},
		{"nested inline tables", []byte("x = " + strings.Repeat("{a=", 13000) + "1" + strings.Repeat("}", 13000) + "\n"), errTooDeep},
		{"deep dotted key", []byte(strings.Repeat("a.", size/2) + "a = 1\n"), errTooDeep},
		{"deep table header", []byte("[" + strings.Repeat("a.", size/2) + "a]\n"), errTooDeep},
		{"deep array table header", []byte("[[" + strings.Repeat("a.", size/2) + "a]]\n"), errTooDeep},
		{"many keys in the root table", fill(func(i int) string { return fmt.Sprintf("k%d = 1\n", i) }), errTooWide},
		{"many dotted keys in a routine", fill(func(i int) string {
			if i == 0 {
				return "[[routine]]\n"
			}
			return fmt.Sprintf("env.K%d = \"v\"\n", i)
		}), errTooWide},
		{"many keys in an inline table", append(append([]byte("env = {"), fill(func(i int) string { return fmt.Sprintf("k%d=1,", i) })...), "z=1}\n"...), errTooWide},
		{"many table headers", fill(func(i int) string { return fmt.Sprintf("[t%d]\n", i) }), errTooWide},
		{"huge array", []byte("x = [" + strings.Repeat("1,", size/2) + "]\n"), nil},
		{"huge list of bad notify_on entries", []byte("[[routine]]\nname = \"a\"\nevery = \"1m\"\nnotify = { title = \"x\" }\nnotify_on = [" + strings.Repeat("1,", size/2) + "]\n"), nil},
		{"long key over a huge array", []byte(strings.Repeat("k", 120) + " = [" + strings.Repeat("1,", size/2) + "]\n"), nil},
		{"long headers", fill(func(i int) string {
			return fmt.Sprintf("[%s%d]\nk=1\n", strings.Repeat("h", 120), i)
		}), errTooWide}, // more than MaxTableKeys distinct headers
		{"empty array tables", fill(func(int) string { return "[[routine]]\n" }), nil},
		{"many valid routines", fill(func(i int) string {
			return fmt.Sprintf("[[routine]]\nname = \"r%d\"\nevery = \"%dm\"\nnotify = { title = \"x\" }\n", i, 1+i%59)
		}), nil},
	}
}

// A hostile routines.toml is refused, or loaded, with work bounded per byte: at most
// maxAllocPerByte bytes allocated per byte of file (the deep nesting of 40 KB allocated
// 16,000 per byte before), and no table that makes the decoder quadratic.
func TestHostileConfigsCostLinearWork(t *testing.T) {
	const maxAllocPerByte = 1500 // measured: 0 to 610
	// 64 KiB: the cost per byte is the same at any size when linear, and the race detector
	// makes the full size take minutes. BenchmarkHostileConfigs runs that.
	for _, c := range hostileConfigs(64 << 10) {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := Parse("routines.toml", c.data)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(c.data))
			t.Logf("%d bytes: %s, %.0f bytes allocated per byte", len(c.data), took, perByte)
			if !errors.Is(err, c.want) || (c.want != nil && !errors.Is(err, ErrConfig)) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if perByte > maxAllocPerByte {
				t.Errorf("allocated %.0f bytes per byte of file, want at most %d", perByte, maxAllocPerByte)
			}
			// Only a gross bound (a loaded machine under -race must never trip it): the
			// quadratic cases are caught by their error above.
			if took > time.Minute {
				t.Errorf("took %s", took)
			}
		})
	}
}

// keyPositions is linear in the file: no path is built per nesting level or repeated per key
// under a long header (the old table took 16,000 bytes per byte of "[[[[…"), and columns are
// counted on from the previous key (counting from the line start for each element of a
// one-line array was quadratic: minutes for 1 MiB).
func TestKeyPositionsLinear(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < MaxConfigBytes/4; i++ {
		fmt.Fprintf(&b, "[%s%d]\n", strings.Repeat("h", 120), i)
		for j := range 100 {
			fmt.Fprintf(&b, "k%d = [1, 2]\n", j)
		}
	}
	for name, data := range map[string][]byte{
		"nested arrays":   []byte("x = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"),
		"long headers":    []byte(b.String()),
		"one-line array":  []byte("x = [" + strings.Repeat("1,", MaxConfigBytes/2-10) + "]\n"),
		"multibyte array": []byte("x = [" + strings.Repeat("'é',", MaxConfigBytes/5) + "]\n"),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		keyPositions(data)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(data))
		t.Logf("%s, %d bytes: %s, %.0f bytes allocated per byte", name, len(data), took, perByte)
		if perByte > 300 || took > time.Minute { // measured: at most 100 per byte, 0.3 s
			t.Errorf("%s: %s and %.0f bytes allocated per byte of file", name, took, perByte)
		}
	}
}

// Positions are right after a long line, for multibyte text, for keys past maxKeyPath (their
// parent's) and for a sub-table of an array table ([routine.watch] is routine[1].watch).
func TestKeyPositions(t *testing.T) {
	long := strings.Repeat("k", maxKeyPath)
	data := []byte("a = '" + strings.Repeat("x", 5000) + "'\n" +
		"'é' = 'ü'\n" +
		"[[routine]]\n[[routine]]\n  [routine.watch]\n  url = 'x'\n" +
		"[t]\n" + long + " = [1, 2]\nlist = ['ü', 'é', 3]\n")
	got := keyPositions(data)
	for path, want := range map[string]pos{
		"a": {1, 1}, "é": {2, 1}, "routine[0]": {3, 3}, "routine[1]": {4, 3},
		"routine[1].watch": {5, 4}, "routine[1].watch.url": {6, 3}, "t": {7, 2},
		"t.list": {9, 1}, "t.list[0]": {9, 9}, "t.list[2]": {9, 19},
	} {
		if got[path] != want {
			t.Errorf("%s at %v, want %v", path, got[path], want)
		}
	}
	if _, ok := got["t."+long]; ok {
		t.Errorf("a path over maxKeyPath was recorded")
	}
}

// The limits name the file, line and column and say what is allowed.
func TestConfigLimitErrorsArePositioned(t *testing.T) {
	lines := func(format string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	inline := "a = { " + lines("k%d = 1, ", MaxTableKeys+1) + "z = 1 }\n"
	for body, want := range map[string]string{
		"[[routine]]\nname = \"a\"\nat = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n": "routines.toml:3:38: arrays or inline tables nested deeper than 32 levels; a routine needs 3 at most",
		"[[routine]]\n\n\n\n" + lines("k%d = 1\n", MaxTableKeys+1):                                    fmt.Sprintf("routines.toml:%d:1: more than 256 keys in one table; a routine has 25 keys at most", 5+MaxTableKeys),
		inline:                             fmt.Sprintf("routines.toml:1:%d: more than 256 keys in one inline table", strings.Index(inline, "k256 ")+1),
		lines("[[t%d]]\n", MaxTableKeys+1): "routines.toml:257:3: more than 256 different table headers",
	} {
		_, err := Parse("routines.toml", []byte(body))
		if !errors.Is(err, ErrConfig) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

// Brackets in strings and comments are not nesting: a file at the limits' edge with many of
// them in every kind of string loads.
func TestNestingIgnoresStringsAndComments(t *testing.T) {
	deep := strings.Repeat("[{", 40)
	body := fmt.Sprintf(`# %[1]s
[[routine]]
name = "a"   # %[1]s
every = "1m"
shell = "echo '%[1]s' \"%[1]s\" \\\"%[1]s"
env = { A = '%[1]s', B = """
%[1]s "" %[1]s \""" %[1]s""""", C = '''%[1]s '' %[1]s'''''}
dir = "/x\\"
watch = "not an action: a string"
`, deep)
	body = strings.Replace(body, "watch = \"not an action: a string\"\n", "", 1)
	cfg, err := Parse("routines.toml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Routine("a")
	if r == nil || r.Env["C"] != deep+" '' "+deep+"''" || !strings.HasSuffix(r.Env["B"], deep+`""`) {
		t.Fatalf("routine a: %+v, problems %v", r, cfg.Problems)
	}
	if off := tooDeep([]byte(body + "x = " + strings.Repeat("[", 33) + strings.Repeat("]", 33) + "\n")); off < 0 {
		t.Fatal("nesting after the strings not seen")
	}
}

// BenchmarkHostileConfigs reports the time and allocation of loading each hostile shape.
func BenchmarkHostileConfigs(b *testing.B) {
	for _, c := range hostileConfigs(MaxConfigBytes - 1000) {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for range b.N {
				_, _ = Parse("routines.toml", c.data)
			}
		})
	}
}

// A file reports its first maxProblems problems and one counting the rest; a routine whose
// problems are past the cap is still left out.
func TestProblemsAreCappedPerFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("[[routine]]\nname = \"ok\"\nevery = \"1m\"\nnotify = { title = \"x\" }\n")
	b.WriteString("[[routine]]\nname = \"list\"\nevery = \"1m\"\nnotify = { title = \"x\" }\nnotify_on = [" + strings.Repeat("1, ", 150) + "]\n")
	b.WriteString("[[routine]]\nname = \"late\"\nevery = \"soon\"\nnotify = { title = \"x\" }\n")
	cfg, err := Parse("routines.toml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Routines) != 1 || cfg.Routines[0].Name != "ok" {
		t.Fatalf("valid routines %v, want only ok", cfg.Routines)
	}
	if len(cfg.Problems) != maxProblems+1 {
		t.Fatalf("%d problems, want %d", len(cfg.Problems), maxProblems+1)
	}
	if last := cfg.Problems[maxProblems].String(); last != "routines.toml:9:1: 51 more problems from here on are not shown; fix the ones above first" {
		t.Fatalf("last problem: %s", last)
	}
}

// parts is n key parts "a.a.….a".
func parts(n int) string { return strings.TrimSuffix(strings.Repeat("a.", n), ".") }

// deepKeys are files whose keys go MaxKeyDepth+1 parts deep in each way keys nest (the long ones
// about size bytes), with the line:col where the scan must stop: the dot before the part past
// the limit, or that part's first byte.
func deepKeys(size int) map[string]struct {
	data []byte
	at   string
} {
	dot := func(n int) int { return 2 * n } // the column of the dot after part n of parts(…) at column 1
	at := func(line, col int) string { return fmt.Sprintf("%d:%d", line, col) }
	inline := "x = { " + parts(15) + " = [ 1, { "
	return map[string]struct {
		data []byte
		at   string
	}{
		"dotted key, 1 MiB":            {[]byte(parts(size/2) + " = 1\n"), at(1, dot(MaxKeyDepth))},
		"table header, 1 MiB":          {[]byte("[" + parts(size/2) + "]\n"), at(1, 1+dot(MaxKeyDepth))},
		"array table header":           {[]byte("x = 1\n[[" + parts(size/2) + "]]\n"), at(2, 2+dot(MaxKeyDepth))},
		"header and dotted key":        {[]byte("[" + parts(20) + "]\n" + parts(13) + " = 1\n"), at(2, dot(MaxKeyDepth-20))},
		"quoted parts and spaces":      {[]byte(strings.Repeat(`"a.b" . `, MaxKeyDepth) + "'c' = 1\n"), at(1, 8*(MaxKeyDepth-1)+7)},
		"dotted keys in inline tables": {[]byte(inline + parts(18) + " = 2 } ] }\n"), at(1, len(inline)+dot(MaxKeyDepth-16))}, // x is part 1
	}
}

// A key nested deeper than MaxKeyDepth by its parts (a dotted key, a table header, both, inside
// inline tables) is refused before it is parsed, at the part past the limit, with next to no
// memory: a 1 MiB dotted key took 150 MB to parse and 800 MB to decode before.
func TestDeepKeysAreRefusedCheaply(t *testing.T) {
	const maxAlloc = 64 << 10 // bytes per refusal, whatever the file's size
	for name, c := range deepKeys(MaxConfigBytes - 100) {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Parse("routines.toml", c.data)
			runtime.ReadMemStats(&after)
			want := "routines.toml:" + c.at + ": keys nested deeper than 32 levels (each part of a table header or dotted key is one level); a routine needs 4 at most"
			if !errors.Is(err, errTooDeep) || !errors.Is(err, ErrConfig) || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes refused, %d bytes allocated", len(c.data), alloc)
			if alloc > maxAlloc {
				t.Errorf("refusing %d bytes allocated %d bytes, want at most %d", len(c.data), alloc, maxAlloc)
			}
		})
	}
}

// Keys at MaxKeyDepth load, however they reach it; dots that are not key separators (in values:
// floats, times, strings; in quoted parts; in comments) are not counted.
func TestKeysAtTheDepthLimitLoad(t *testing.T) {
	for name, data := range map[string]string{
		"dotted key":            parts(MaxKeyDepth) + " = 1\n",
		"header":                "[" + parts(MaxKeyDepth-1) + "]\nk = 1\n",
		"array table header":    "[[" + parts(MaxKeyDepth) + "]]\n",
		"header and dotted key": "[" + parts(16) + "]\n" + parts(16) + " = 1.5\nb." + parts(15) + " = 2\n",
		"inline tables":         "x = { " + parts(15) + " = [ 1, { " + parts(16) + " = 2 } ], b." + parts(30) + " = 3 }\n",
		"dots elsewhere": "[" + parts(MaxKeyDepth-1) + "]   # " + parts(50) + "\n" +
			`"` + parts(50) + `" = [1.5, 2.25, 1979-05-27T07:32:00.999Z, "` + parts(50) + `", '` + parts(50) + "',\n  3.5]\n" +
			"m = '''\n" + parts(50) + "\n'''\nt = 07:32:00.5\n",
	} {
		cfg, err := Parse("routines.toml", []byte(data))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// The only problems are unknown top-level keys: the limits let the file through.
		for _, p := range cfg.Problems {
			if !strings.Contains(p.Message, "unknown key") {
				t.Errorf("%s: %s", name, p)
			}
		}
	}
}

// FuzzLimits checks the limits checked before decoding (tooDeep, keysTooDeep, tooWide): they
// never panic, and a file they let through that decodes has no value nested deeper than they
// allow — MaxKeyDepth key parts (each a table, and for an array table also an array) and
// MaxNesting arrays and inline tables — and no table with more than two MaxTableKeys keys (a
// section's own and the headers under it). Parse on it does not panic either. The seeds (the
// hostile shapes, the deep keys, the example file, one file with dots in every place that is
// not a key separator) run with every go test, and any failure `go test -fuzz FuzzLimits`
// writes to testdata/fuzz/FuzzLimits.
func FuzzLimits(f *testing.F) {
	for _, c := range hostileConfigs(4 << 10) {
		f.Add(c.data)
	}
	for _, c := range deepKeys(4 << 10) {
		f.Add(c.data)
	}
	f.Add([]byte(goodConfig))
	f.Add([]byte("[a.\"b.c\" . 'd']   # e.f\nx.y = { z.w = [1.5, { q.r = 2 }, \"s.t\"], u = 07:32:00.5 }\n[[a.b]]\nk.'l.m' = '''n.o'''\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tooDeep(data) >= 0 || keysTooDeep(data) >= 0 {
			return
		}
		if off, _ := tooWide(data); off >= 0 {
			return
		}
		var doc map[string]any
		if toml.Unmarshal(data, &doc) != nil {
			return
		}
		if depth, width := shape(doc); depth > 2*MaxKeyDepth+MaxNesting+1 || width > 2*MaxTableKeys {
			t.Fatalf("let through a file that decodes %d deep with a table of %d keys", depth, width)
		}
		_, _ = Parse("routines.toml", data)
	})
}

// shape returns how many tables and arrays v nests (v itself included) and the most keys of a
// table in it.
func shape(v any) (depth, width int) {
	var kids []any
	switch x := v.(type) {
	case map[string]any:
		width = len(x)
		for _, k := range x {
			kids = append(kids, k)
		}
	case []any:
		kids = x
	default:
		return 0, 0
	}
	for _, k := range kids {
		d, w := shape(k)
		depth, width = max(depth, d), max(width, w)
	}
	return depth + 1, width
}
