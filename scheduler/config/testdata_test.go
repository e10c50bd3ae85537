package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what LoadConfig reports")

// testdataCases are the routines files in testdata/, each with NAME.golden: the lines
// LoadConfig reports for it, "FILE:LINE:COL: message" each, in order (empty for a valid file).
// whole marks a file that cannot be used at all: its one line is the *ConfigError.
var testdataCases = []struct {
	name  string
	whole bool
	valid []string // the routines that stay valid, in file order
}{
	{name: "good", valid: []string{"heartbeat", "morning"}},
	{name: "never-fires", valid: []string{"leap-day"}},
	{name: "huge-every", valid: []string{"a-leap-year"}},
	{name: "deep-nesting", whole: true},
	{name: "not-toml", whole: true},
	{name: "duplicate-name", valid: []string{"backup"}},
	{name: "bad-timezone", valid: []string{"in-berlin"}},
	{name: "mixed"},
	{name: "bad-hub", valid: []string{"local-backup"}},
}

// Every testdata/*.toml gives exactly the lines of its .golden file, and keeps exactly the
// routines the table names; a file in testdata/ without a table row fails the test.
func TestTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, c := range testdataCases {
		listed = append(listed, filepath.Join("testdata", c.name+".toml"))
	}
	slices.Sort(files)
	slices.Sort(listed)
	if !slices.Equal(files, listed) {
		t.Fatalf("testdata/*.toml = %v, table = %v: give every file a row", files, listed)
	}
	for _, c := range testdataCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name+".toml")
			cfg, err := LoadConfig(path)
			var got []string
			switch {
			case c.whole:
				var ce *ConfigError
				if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) || cfg != nil {
					t.Fatalf("LoadConfig = %v, %v; want a *ConfigError wrapping ErrConfig", cfg, err)
				}
				got = []string{err.Error()}
			case err != nil:
				t.Fatalf("LoadConfig: %v", err)
			default:
				for _, p := range cfg.Problems {
					got = append(got, p.String())
				}
				var names []string
				for _, r := range cfg.Routines {
					names = append(names, r.Name)
				}
				if !slices.Equal(names, c.valid) {
					t.Errorf("valid routines = %v, want %v", names, c.valid)
				}
			}
			// The goldens name files as testdata/NAME.toml; Windows prints testdata\NAME.toml.
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], path, filepath.ToSlash(path))
			}
			golden := filepath.Join("testdata", c.name+".golden")
			if *update {
				text := strings.Join(got, "\n")
				if text != "" {
					text += "\n"
				}
				if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			if len(data) == 0 {
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s:\ngot\n\t%s\nwant (%s)\n\t%s", path, strings.Join(got, "\n\t"), golden, strings.Join(want, "\n\t"))
			}
		})
	}
}
